"""`lb-` is the leaderboard's prefix: an id it did not issue, or no longer holds (the run
ended, the server restarted), answers 404 on every door over real HTTP, and no practice
episode is created under a leaderboard name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from dataclean_env.settings import Settings
from tests.web import LiveServer

LOST = "lb-" + "0123456789abcdef" * 2


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with LiveServer(Settings(leaderboard_db=tmp_path / "lb.sqlite3")) as live:
        yield live


def test_a_lost_leaderboard_id_is_404_over_rest(server: LiveServer) -> None:
    reset = httpx.post(f"{server.url}/reset", json={"task_id": "crm", "episode_id": LOST})
    assert reset.status_code == 404, reset.text
    assert reset.json()["code"] == "UNKNOWN_EPISODE"
    assert reset.json()["detail"].startswith(f"no leaderboard episode '{LOST}' here")
    state = httpx.get(f"{server.url}/state", params={"episode_id": LOST})
    assert (state.status_code, state.json()["code"]) == (404, "UNKNOWN_EPISODE")
    assert len(server.app.state.store) == 0


def test_a_lost_leaderboard_id_is_refused_over_ws(server: LiveServer) -> None:
    with connect(f"ws://127.0.0.1:{server.port}/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_id": "crm", "episode_id": LOST}}))
        frame = json.loads(ws.recv(timeout=120))
    assert frame["type"] == "error", frame
    assert f"no leaderboard episode '{LOST}' here" in frame["data"]["message"], frame
