"""Many clients at once against a real uvicorn: each sees its own episode, steps serialise."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

import httpx

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.schemas import Action
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry
from tests.support import TASK_IDS
from tests.web import LiveServer

CLIENTS = 32
# Steps that hurt (or are refused) wherever they land in a plan; none names a column.
DAMAGING = [
    {"operation": "fill_missing", "parameters": {"strategy": "ffill"}},
    {"operation": "remove_outliers", "parameters": {"method": "zscore", "threshold": 0.5}},
    {"operation": "rename_columns"},
    {"operation": "fix_dtype", "parameters": {"dtype": "str"}},
    {"operation": "remove_duplicates", "parameters": {"subset": ["nope"]}},
    {"operation": "no_such_operation"},
]


def run_threads(count: int, target: Callable[[int], Any]) -> list[Any]:
    """Run target(i) in `count` threads started together; re-raise the first failure."""
    results: list[Any] = [None] * count
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def worker(i: int) -> None:
        try:
            barrier.wait(timeout=10)
            results[i] = target(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a client thread hung"
    if errors:
        raise errors[0]
    return results


def client_script(i: int, rng: random.Random, metadata: dict[str, dict]) -> dict[str, Any]:
    task_id = rng.choice(TASK_IDS)
    actions = list(metadata[task_id]["solution"])
    if i % 3 == 2:  # a damaging client: two bad steps somewhere before the finish
        for action in rng.sample(DAMAGING, 2):
            actions.insert(rng.randrange(len(actions)), action)
    return {
        "episode_id": f"client-{i:02d}",
        "task_id": task_id,
        "seed": rng.choice([None, i]),
        "carrier": ("body", "query", "header")[i % 3],
        "actions": actions,
    }


def expected_answers(registry: TaskRegistry, script: dict[str, Any]) -> list[tuple[int, dict]]:
    """The same actions run sequentially in process: (status, JSON body) per step."""
    episode = Episode(script["episode_id"], registry.make(script["task_id"], script["seed"]))
    answers = []
    for action in script["actions"]:
        try:
            answers.append(
                (200, episode.step(Action.model_validate(action)).model_dump(mode="json"))
            )
        except EnvError as error:
            answers.append(
                (error.status, {"detail": error.detail, "code": error.code, **error.fields})
            )
    return answers


def play(url: str, script: dict[str, Any]) -> dict[str, Any]:
    episode_id, task_id = script["episode_id"], script["task_id"]
    with httpx.Client(base_url=url, timeout=30) as http:
        reset = http.post(
            f"/reset/{task_id}", json={"episode_id": episode_id, "seed": script["seed"]}
        )
        answers = []
        for action in script["actions"]:
            if script["carrier"] == "body":
                response = http.post("/step", json={"episode_id": episode_id, "action": action})
            elif script["carrier"] == "query":
                response = http.post(
                    f"/step/{task_id}", json=action, params={"episode_id": episode_id}
                )
            else:
                response = http.post(
                    f"/step/{task_id}", json=action, headers={"X-Episode-Id": episode_id}
                )
            answers.append((response.status_code, response.json()))
        state = http.get("/state", params={"episode_id": episode_id}).json()
    return {"reset": (reset.status_code, reset.json()), "answers": answers, "state": state}


def test_many_clients_each_see_their_own_episode(
    live_server: LiveServer, registry: TaskRegistry, metadata: dict[str, dict]
) -> None:
    rng = random.Random(20240601)
    scripts = [client_script(i, rng, metadata) for i in range(CLIENTS)]
    assert len({s["task_id"] for s in scripts}) == 4
    outcomes = run_threads(CLIENTS, lambda i: play(live_server.url, scripts[i]))

    for script, outcome in zip(scripts, outcomes, strict=True):
        status, reset = outcome["reset"]
        assert status == 200, reset
        assert reset["observation"]["episode_id"] == script["episode_id"]
        assert reset["observation"]["task_id"] == script["task_id"]

        accepted = [body for status, body in outcome["answers"] if status == 200]
        for body in accepted:
            assert body["observation"]["episode_id"] == script["episode_id"]
            assert body["observation"]["task_id"] == script["task_id"]
        assert [b["observation"]["step"] for b in accepted] == list(range(1, len(accepted) + 1))
        assert all(status != 500 for status, _ in outcome["answers"])

        assert outcome["answers"] == expected_answers(registry, script)
        state = outcome["state"]
        assert state["episode_id"] == script["episode_id"]
        assert state["step_count"] == len(accepted)
        assert state["done"] is True
        assert state["reward"] == accepted[-1]["reward"]

    optimal = [
        o
        for s, o in zip(scripts, outcomes, strict=True)
        if len(s["actions"]) == len(metadata[s["task_id"]]["solution"])
    ]
    assert optimal
    assert all(o["state"]["reward"]["total"] == 0.9999 for o in optimal)
    damaged = [o for o in outcomes if o["state"]["reward"]["total"] < 0.9999]
    assert damaged, "the damaging clients should score below the optimum"


def test_concurrent_steps_on_one_episode_are_serialised(live_server: LiveServer) -> None:
    task_id, episode_id, senders = "hard_full_pipeline", "shared", 30
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        reset = http.post(f"/reset/{task_id}", json={"episode_id": episode_id})
        assert reset.status_code == 200
        assert reset.json()["observation"]["steps_remaining"] == 20

    def send(_: int) -> tuple[int, dict[str, Any]]:
        with httpx.Client(base_url=live_server.url, timeout=30) as http:
            response = http.post(
                f"/step/{task_id}",
                json={"operation": "validate_schema"},
                headers={"X-Episode-Id": episode_id},
            )
            return response.status_code, response.json()

    answers = run_threads(senders, send)
    steps = sorted(body["observation"]["step"] for status, body in answers if status == 200)
    assert steps == list(range(1, 21))
    refused = [body for status, body in answers if status != 200]
    assert len(refused) == senders - 20
    assert all(
        status == 409 and body["code"] == "EPISODE_FINISHED"
        for status, body in answers
        if status != 200
    )
    done_flags = [body["done"] for status, body in answers if status == 200]
    assert done_flags.count(True) == 1
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        state = http.get("/state", params={"episode_id": episode_id}).json()
    assert state["step_count"] == 20
    assert state["done"] is True
    assert [h["step"] for h in state["history"]] == list(range(1, 21))


def test_concurrent_resets_fill_a_bounded_store_exactly() -> None:
    server = LiveServer(Settings(max_episodes=10)).start()
    try:

        def reset(i: int) -> int:
            with httpx.Client(base_url=server.url, timeout=30) as http:
                return http.post(
                    "/reset/easy_dedup_rename", json={"episode_id": f"race-{i}"}
                ).status_code

        statuses = run_threads(24, reset)
        assert sorted(statuses) == [200] * 10 + [503] * 14
        with httpx.Client(base_url=server.url, timeout=30) as http:
            served = [
                http.get("/state", params={"episode_id": f"race-{i}"}).status_code
                for i in range(24)
            ]
        assert served == [200 if s == 200 else 404 for s in statuses]
    finally:
        server.close()
