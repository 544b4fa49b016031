"""Built leaderboard episodes are bounded as every other episode is: a joined one (its table
made) holds a place in the store's capacity and in its joiner's quota until it ends; a join
past a bound is refused as a reset past it is, and the episode stays joinable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient
from sqlalchemy import select
from websockets.sync.client import connect

from dataclean_env.leaderboard.tables import run_episodes
from dataclean_env.server.app import create_app
from tests.api.test_leaderboard import FINISH, board_settings, start_run, step
from tests.support import ok
from tests.web import LiveServer


def refusal(answer: httpx.Response) -> tuple[int, str, str | None]:
    return answer.status_code, answer.json()["code"], answer.headers.get("Retry-After")


def statuses(client: TestClient, run_id: str) -> list[str]:
    engine = client.app.state.leaderboard.open()
    with engine.connect() as connection:
        return list(
            connection.execute(
                select(run_episodes.c.status)
                .where(run_episodes.c.run_id == run_id)
                .order_by(run_episodes.c.position)
            ).scalars()
        )


def test_joins_past_the_quota_or_the_capacity_are_refused_as_resets_are(tmp_path: Path) -> None:
    # A quota of 2 (a quarter of the 8 places, the most a quota may be).
    settings = board_settings(tmp_path, max_episodes=8, episodes_per_client=2)
    with TestClient(create_app(settings), client=("127.0.0.2", 50000)) as a:
        b = TestClient(a.app, client=("127.0.0.3", 50000))
        c = TestClient(a.app, client=("127.0.0.4", 50000))
        store = a.app.state.store
        a.app.state.leaderboard.clock = lambda: 1000.0  # time stands still: exact waits
        run = start_run(a, families=["crm"], episodes=5)
        ids = [e["episode_id"] for e in run["episodes"]]
        assert len(store) == 0  # issued, none built
        ok(a.post("/reset", json={"episode_id": ids[0]}))
        ok(a.get("/state", params={"episode_id": ids[1]}))  # a read that builds: a join
        assert len(store) == 2
        # a's quota is full of episodes in play: its join is refused as its reset is
        join = a.post("/reset", json={"episode_id": ids[2]})
        reset = a.post("/reset/crm", json={"episode_id": "a-own"})
        # Retry-After: until the first deadline of its episodes in play frees a place
        assert refusal(join) == refusal(reset) == (503, "CLIENT_QUOTA_REACHED", "1800")
        assert "maximum of 2 episodes" in join.json()["detail"]
        read = a.get("/state", params={"episode_id": ids[2]})
        assert refusal(read) == refusal(reset)
        assert len(store) == 2
        # the refused episode is not lost: another client joins it; others fill the store
        assert ok(b.post("/reset", json={"episode_id": ids[2]}))["observation"]["step"] == 0
        for n in (5, 6, 7):
            filler = TestClient(a.app, client=(f"127.0.0.{n}", 50000))
            for own in "xy"[: 2 if n < 7 else 1]:
                ok(filler.post("/reset/crm", json={"episode_id": f"{n}-{own}"}))
        assert len(store) == 8
        join = c.post("/reset", json={"episode_id": ids[3]})
        reset = c.post("/reset/crm", json={"episode_id": "c-own"})
        # Retry-After: when the first filler turns idle (its own episodes can be evicted)
        assert refusal(join)[:2] == refusal(reset)[:2] == (503, "SERVER_FULL")
        assert str(refusal(join)[2]).isdigit()
        # an episode's end frees its place and its joiner's share; it stays readable
        step(a, ids[0], FINISH)
        assert len(store) == 7
        assert ok(a.get("/state", params={"episode_id": ids[0]}))["done"] is True
        ok(c.post("/reset", json={"episode_id": ids[3]}))
        assert len(store) == 8
        assert statuses(a, run["run_id"]) == ["finished", "open", "open", "open", "open"]
        # nothing was forfeited: every refused episode is played to the end
        for episode_id, client in [(ids[1], a), (ids[2], b), (ids[3], c), (ids[4], a)]:
            ok(client.post("/reset", json={"episode_id": episode_id}))
            step(client, episode_id, FINISH)
        assert len(store) == 5  # the fillers' own episodes
        assert statuses(a, run["run_id"]) == ["finished"] * 5
        assert ok(a.get(f"/leaderboard/runs/{run['run_id']}"))["status"] == "complete"


def test_one_client_plays_a_run_longer_than_its_quota_one_episode_at_a_time(
    tmp_path: Path,
) -> None:
    settings = board_settings(tmp_path, max_episodes=2, episodes_per_client=1)
    with TestClient(create_app(settings)) as client:
        run = start_run(client, families=["orders"], episodes=4)
        for episode in run["episodes"]:
            ok(client.post("/reset", json={"episode_id": episode["episode_id"]}))
            assert len(client.app.state.store) == 1
            step(client, episode["episode_id"], FINISH)
        assert ok(client.get(f"/leaderboard/runs/{run['run_id']}"))["status"] == "complete"


def test_a_ws_join_past_the_quota_is_refused_and_the_episode_stays_joinable(
    tmp_path: Path,
) -> None:
    settings = board_settings(tmp_path, max_episodes=8, episodes_per_client=1)
    server = LiveServer(settings).start()
    try:
        run = ok(
            httpx.post(
                f"{server.url}/leaderboard/runs",
                json={"name": "ws", "model": "m", "families": ["crm"], "episodes": 2},
                timeout=60,
            )
        )
        first, second = (e["episode_id"] for e in run["episodes"])
        ok(httpx.post(f"{server.url}/reset", json={"episode_id": first}, timeout=60))
        with connect(f"ws://127.0.0.1:{server.port}/ws") as ws:
            ws.send(json.dumps({"type": "reset", "data": {"episode_id": second}}))
            answer: dict[str, Any] = json.loads(ws.recv(timeout=30))
            assert answer["type"] == "error", answer
            assert answer["data"]["code"] == "CLIENT_QUOTA_REACHED", answer
            assert len(server.app.state.store) == 1
            ok(httpx.post(f"{server.url}/step", json={"episode_id": first, **FINISH}, timeout=60))
            ws.send(json.dumps({"type": "reset", "data": {"episode_id": second}}))
            joined = json.loads(ws.recv(timeout=30))
            assert joined["type"] == "observation", joined
            assert joined["data"]["observation"]["episode_id"] == second
            assert len(server.app.state.store) == 1
    finally:
        server.close()
