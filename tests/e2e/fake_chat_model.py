"""A scripted stand-in for a chat model behind an OpenAI-compatible API, on 127.0.0.1.

It answers `POST /v1/chat/completions` (plain JSON, or server-sent events when the request
streams) the way a model driven by verifiers' OpenEnv bridge would: it reads the last user
message as the bridge's JSON payload, lets the project's heuristic agent choose the next
action for that episode (keyed by the observation's `episode_id`), replies with the action as
JSON text, and records every action it sent, so a test can replay them against the server.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import defaultdict
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from dataclean_env.agents.heuristic import HeuristicAgent

FALLBACK = {"operation": "finish", "parameters": {}}


class FakeChatModel:
    def __init__(self) -> None:
        self.agents: dict[str, HeuristicAgent] = {}
        self.actions: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.requests = 0
        self.user_messages: list[str] = []
        self.lock = threading.Lock()
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self._complete)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning"))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def start(self) -> FakeChatModel:
        self.thread.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                httpx.post(f"{self.url}/chat/completions", json={}, timeout=1)
                return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("the fake chat model did not start")

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()

    def reply(self, messages: list[dict[str, Any]]) -> str:
        """The next action, as JSON text, for the conversation's latest observation."""
        user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
        text = _text(user.get("content")) if user else ""
        with self.lock:
            self.user_messages.append(text)
            try:
                observation = json.loads(text)["observation"]
                episode_id = observation["episode_id"]
            except (ValueError, KeyError, TypeError):
                return json.dumps(FALLBACK)
            agent = self.agents.setdefault(episode_id, HeuristicAgent())
            action = agent.act(observation)
            self.actions[episode_id].append(action)
        return json.dumps(action)

    async def _complete(self, request: Request):
        body = await request.json()
        if not body.get("messages"):
            return JSONResponse({"detail": "no messages"}, status_code=400)
        self.requests += 1
        content = self.reply(body["messages"])
        model = body.get("model", "fake")
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        if not body.get("stream"):
            return {
                "id": f"chatcmpl-{self.requests}",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": usage,
            }
        head = {"id": f"chatcmpl-{self.requests}", "object": "chat.completion.chunk"}
        head |= {"created": 0, "model": model}
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": content}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": usage},
        ]
        events = [f"data: {json.dumps(head | chunk)}\n\n" for chunk in chunks]
        events.append("data: [DONE]\n\n")
        return StreamingResponse(iter(events), media_type="text/event-stream")


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""
