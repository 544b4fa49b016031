"""A client at its /ws quota (DCE_SESSIONS_PER_CLIENT) is refused with CLIENT_QUOTA_REACHED
while another client is served, over real HTTP; closing a session frees its place."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from dataclean_env.settings import Settings
from tests.web import LiveServer

CLIENT, OTHER_CLIENT = "127.0.0.1", "127.0.0.3"
QUOTA = 2
RESET = json.dumps({"type": "reset", "data": {"task_id": "easy_dedup_rename"}})


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    settings = Settings(leaderboard_db=tmp_path / "lb.sqlite3", sessions_per_client=QUOTA)
    with LiveServer(settings) as live:
        yield live


def session(server: LiveServer, source: str) -> ClientConnection:
    sock = socket.create_connection(("127.0.0.1", server.port), 60, (source, 0))
    return connect(f"ws://127.0.0.1:{server.port}/ws", sock=sock)


def played(ws: ClientConnection) -> dict:
    """The first frame after a reset (an observation, or the refusal already sent)."""
    with contextlib.suppress(ConnectionClosed):
        ws.send(RESET)
    return json.loads(ws.recv(timeout=120))


def served_once_freed(server: LiveServer) -> str:
    """The frame type a new session of CLIENT gets once the server has seen a closed one go
    (the server frees the place after the close handshake: a deadline far from that)."""
    deadline = time.monotonic() + 60
    while True:
        with session(server, CLIENT) as ws:
            frame = played(ws)
        if frame["type"] == "observation" or time.monotonic() > deadline:
            return frame["type"]
        time.sleep(0.05)


def test_a_client_at_its_quota_is_refused_and_another_is_served(server: LiveServer) -> None:
    with contextlib.ExitStack() as stack:
        held = [stack.enter_context(session(server, CLIENT)) for _ in range(QUOTA)]
        assert [played(ws)["type"] for ws in held] == ["observation"] * QUOTA
        with session(server, CLIENT) as refused:
            frame = played(refused)
            with pytest.raises(ConnectionClosed):
                refused.recv(timeout=60)
        assert frame["data"]["code"] == "CLIENT_QUOTA_REACHED", frame
        assert frame["data"]["message"] == (
            f"this client has {QUOTA} open sessions (/ws and MCP), its quota (DCE_SESSIONS_PER_CLIENT); "
            "close one or retry in 30 s"
        )
        assert refused.close_code == 1013  # try again later
        with session(server, OTHER_CLIENT) as other:
            assert played(other)["type"] == "observation"
        held[0].close()
        assert served_once_freed(server) == "observation"
