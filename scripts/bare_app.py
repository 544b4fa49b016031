"""The floor for the benchmark: a bare FastAPI app on the same uvicorn stack as the server.

`POST /step/{task_id}` parses a JSON body and answers a small fixed JSON object; `WS /ws`
echoes each text frame. Whatever the environment adds on top of these is its own cost.

    uv run python -m uvicorn scripts.bare_app:app --port 7870
"""

from __future__ import annotations

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import Response

app = FastAPI()
ANSWER = b'{"observation":{"step":1},"reward":{"total":0.5},"done":false,"info":{}}'


@app.post("/reset/{task_id}")
@app.post("/step/{task_id}")
async def step(task_id: str, request: Request) -> Response:
    await request.json()
    return Response(ANSWER, media_type="application/json")


@app.get("/health")
async def health() -> dict[str, str]:
    return {"status": "healthy"}


@app.websocket("/ws")
async def echo(websocket: WebSocket) -> None:
    await websocket.accept()
    try:
        while True:
            await websocket.send_text(await websocket.receive_text())
    except WebSocketDisconnect:
        return
