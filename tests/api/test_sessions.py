"""Issue 11, defect 3: OpenEnv's session pool cannot be exhausted over plain HTTP.

Sessions made by `POST /mcp {"method": "openenv/session/create"}` have no connection to end
them: they expire after DCE_DETACHED_SESSION_SECONDS; /ws connections that send nothing
for DCE_WS_IDLE_SECONDS are closed; creating sessions is rate-limited per client.
"""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings
from tests.support import ok

CREATE = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"}


def create_session(client: TestClient) -> dict:
    return ok(client.post("/mcp", json=CREATE))


def ws_reset(client: TestClient) -> dict:
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task_id": "easy_dedup_rename"}})
        return ws.receive_json()


def test_detached_sessions_expire_and_free_the_pool() -> None:
    # Four creations and a refusal take milliseconds; the expiry is far from them.
    settings = Settings(max_sessions=4, detached_session_seconds=3)
    with TestClient(create_app(settings)) as client:
        for _ in range(4):
            assert "session_id" in create_session(client)["result"]
        full = ws_reset(client)
        assert full["type"] == "error" and full["data"]["code"] == "CAPACITY_REACHED"
        time.sleep(3.5)  # idle past the detached-session time
        assert ws_reset(client)["type"] == "observation"
        assert client.app.state.openenv.active_sessions == 0


def test_used_detached_sessions_stay() -> None:
    settings = Settings(max_sessions=2, detached_session_seconds=3)
    with TestClient(create_app(settings)) as client:
        session_id = create_session(client)["result"]["session_id"]
        for _ in range(9):  # used every 0.5 s for 4.5 s: never idle for 3 s
            time.sleep(0.5)
            listed = client.post(
                "/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/list",
                    "params": {"session_id": session_id},
                },
            )
            assert "Unknown session_id" not in listed.text
        assert session_id in client.app.state.openenv._sessions


def test_session_creation_is_rate_limited_per_client() -> None:
    # One creation back every 20 s: none comes back while the test runs.
    settings = Settings(creation_burst=5, creation_rate_per_second=0.05)
    with TestClient(create_app(settings)) as client:
        for _ in range(5):
            create_session(client)
        refused = client.post("/mcp", json=CREATE)
        assert refused.status_code == 429 and refused.json()["code"] == "RATE_LIMITED"
        assert 1 <= int(refused.headers["retry-after"]) <= 20
        assert client.app.state.openenv.active_sessions == 5
        with client.websocket_connect("/ws") as ws:  # a /ws connect is a creation too
            frame = ws.receive_json()
            assert frame["type"] == "error" and frame["data"]["code"] == "RATE_LIMITED"
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == 1013  # try again later


def test_idle_websocket_is_closed_and_its_session_freed() -> None:
    settings = Settings(ws_idle_seconds=2)
    with TestClient(create_app(settings)) as client:
        with client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "reset", "data": {"task_id": "easy_dedup_rename"}})
            assert ws.receive_json()["type"] == "observation"
            for _ in range(10):  # talking every 0.3 s for 3 s: it stays connected
                time.sleep(0.3)
                ws.send_json({"type": "state"})
                assert ws.receive_json()["type"] == "state"
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()  # then silence: closed after 2 s
            assert closed.value.code == 1001
        deadline = time.monotonic() + 5
        while client.app.state.openenv.active_sessions and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.app.state.openenv.active_sessions == 0


def test_expired_sessions_are_swept_without_new_creations() -> None:
    """Their threads are freed even if nobody asks for a new session."""
    settings = Settings(detached_session_seconds=3)
    with TestClient(create_app(settings)) as client:
        for _ in range(3):
            create_session(client)
        server = client.app.state.openenv
        assert server.active_sessions == 3
        deadline = time.monotonic() + 30  # the sweep runs every second
        while server.active_sessions and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server.active_sessions == 0
        assert not server._session_executors  # their threads were shut down
