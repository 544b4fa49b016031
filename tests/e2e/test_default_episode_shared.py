"""Calls without an episode id share the task's default episode, whoever makes them, as
docs/api.md says: over real HTTP, two clients on two connections see and move one episode,
and the id-less state names its id. A client's own id stays its own."""

from __future__ import annotations

import httpx

from tests.web import LiveServer

TASK = "easy_dedup_rename"
STEP = {"operation": "remove_duplicates", "parameters": {}}


def test_id_less_calls_of_two_clients_share_one_episode_and_its_id() -> None:
    with (
        LiveServer() as server,
        httpx.Client(base_url=server.url, timeout=60) as alice,
        httpx.Client(base_url=server.url, timeout=60) as bob,
    ):
        mine = alice.post(f"/reset/{TASK}", json={"episode_id": "alice-own"}).json()
        shared = alice.post(f"/reset/{TASK}").json()["observation"]["episode_id"]
        assert shared.startswith("dce:") and mine["observation"]["episode_id"] == "alice-own"
        seen = bob.get(f"/state/{TASK}").json()
        assert (seen["episode_id"], seen["step_count"]) == (shared, 0)
        assert bob.post(f"/step/{TASK}", json=STEP).json()["info"]["episode_id"] == shared
        assert alice.get(f"/state/{TASK}").json()["step_count"] == 1  # Bob's step, Alice's view
        by_id = bob.post(f"/step/{TASK}", json=STEP, params={"episode_id": shared})
        assert by_id.json()["observation"]["step"] == 2
        own = alice.get("/state", params={"episode_id": "alice-own"}).json()
        assert own["step_count"] == 0
