"""DCE_ALLOWED_HOSTS against DNS rebinding, over real HTTP: a request whose Host (and
Origin) is another name gets 400 HOST_NOT_ALLOWED on every door, REST and /ws; the listed
name and loopback (the image's health check) are served."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from dataclean_env.settings import Settings
from tests.web import LiveServer

SPACE = "myspace.hf.space"
TASK = "easy_dedup_rename"
NOOP = {"operation": "noop"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    settings = Settings(leaderboard_db=tmp_path / "lb.sqlite3", allowed_hosts=SPACE)
    with LiveServer(settings) as live:
        yield live


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/health", None),
        ("POST", "/reset", {"task_id": TASK}),
        ("POST", f"/step/{TASK}", NOOP),
        ("GET", f"/state/{TASK}", None),
        ("GET", "/leaderboard", None),
    ],
)
def test_a_rebound_name_is_refused_and_the_listed_name_served(
    server: LiveServer, method: str, path: str, body
) -> None:
    rebound = {"host": "attacker.example", "origin": "http://attacker.example"}
    answer = httpx.request(method, server.url + path, json=body, headers=rebound, timeout=60)
    assert answer.status_code == 400, answer.text
    assert answer.json() == {
        "detail": "this server does not answer for host 'attacker.example'",
        "code": "HOST_NOT_ALLOWED",
    }
    for host in (SPACE, f"{SPACE.upper()}:443", f"127.0.0.1:{server.port}"):
        served = httpx.request(method, server.url + path, json=body, headers={"host": host})
        # past the Host check: the step itself is refused (an unknown operation, 422)
        assert served.status_code == (422 if body == NOOP else 200), (host, served.text)


def ws_as(server: LiveServer, host: str):
    """/ws on `server` with `host` in the Host header (the socket goes to 127.0.0.1)."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    return connect(f"ws://{host}:{server.port}/ws", sock=sock)


def test_a_rebound_name_gets_no_ws_session(server: LiveServer) -> None:
    with ws_as(server, "attacker.example") as ws:
        frame = json.loads(ws.recv(timeout=60))
    assert frame["data"]["code"] == "HOST_NOT_ALLOWED", frame
    with ws_as(server, SPACE) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"
