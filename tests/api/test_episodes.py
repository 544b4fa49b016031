"""Episode semantics over HTTP: ids, the default episode, the bounded store, determinism."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dataclean_env.errors import StoreFull, UnknownEpisode
from dataclean_env.schemas import Action
from dataclean_env.server.app import create_app
from dataclean_env.server.store.episode_store import EpisodeStore
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry
from tests.support import TASK_IDS, ok

TASK = "hard_full_pipeline"
PROBE = {"operation": "validate_schema"}


def steps_of(client: TestClient, episode_id: str) -> int:
    return ok(client.get("/state", params={"episode_id": episode_id}))["step_count"]


def default_state(client: TestClient, task_id: str) -> dict[str, Any]:
    return ok(client.get(f"/state/{task_id}"))


# ── ids ──────────────────────────────────────────────────────────────────────


def test_every_reset_creates_a_new_episode_id(client: TestClient) -> None:
    ids = []
    for task_id in TASK_IDS:
        for _ in range(3):
            body = ok(client.post(f"/reset/{task_id}"))
            assert body["observation"]["episode_id"] == body["info"]["episode_id"]
            ids.append(body["observation"]["episode_id"])
        ids.append(ok(client.post("/reset", json={"task_id": task_id}))["info"]["episode_id"])
    assert len(set(ids)) == len(ids) == 16


@pytest.mark.parametrize("carrier", ["body", "query", "header"])
def test_an_id_touches_that_episode_only(client: TestClient, carrier: str) -> None:
    default_id = ok(client.post(f"/reset/{TASK}"))["info"]["episode_id"]
    for episode_id in ("ep-a", "ep-b"):
        ok(client.post(f"/reset/{TASK}", json={"episode_id": episode_id}))

    def step_b() -> dict[str, Any]:
        if carrier == "body":
            return ok(client.post("/step", json={"episode_id": "ep-b", **PROBE}))
        if carrier == "query":
            return ok(client.post(f"/step/{TASK}", json=PROBE, params={"episode_id": "ep-b"}))
        return ok(client.post(f"/step/{TASK}", json=PROBE, headers={"X-Episode-Id": "ep-b"}))

    for number in (1, 2):
        body = step_b()
        assert body["observation"]["episode_id"] == "ep-b"
        assert body["observation"]["step"] == number
    assert steps_of(client, "ep-b") == 2
    assert steps_of(client, "ep-a") == 0
    assert default_state(client, TASK)["episode_id"] == default_id
    assert default_state(client, TASK)["step_count"] == 0


def test_state_by_each_carrier(client: TestClient) -> None:
    ok(client.post(f"/reset/{TASK}", json={"episode_id": "carried"}))
    ok(client.post(f"/step/{TASK}", json=PROBE, params={"episode_id": "carried"}))
    by_query = ok(client.get("/state", params={"episode_id": "carried"}))
    by_header = ok(client.get("/state", headers={"X-Episode-Id": "carried"}))
    by_path = ok(client.get(f"/state/{TASK}", headers={"X-Episode-Id": "carried"}))
    assert by_query == by_header == by_path
    assert by_query["episode_id"] == "carried" and by_query["step_count"] == 1


def test_id_precedence_body_then_query_then_header(client: TestClient) -> None:
    for episode_id in ("in-body", "in-query", "in-header"):
        ok(client.post(f"/reset/{TASK}", json={"episode_id": episode_id}))
    body = ok(
        client.post(
            "/step",
            json={"episode_id": "in-body", **PROBE},
            params={"episode_id": "in-query"},
            headers={"X-Episode-Id": "in-header"},
        )
    )
    assert body["info"]["episode_id"] == "in-body"
    body = ok(
        client.post(
            f"/step/{TASK}",
            json=PROBE,
            params={"episode_id": "in-query"},
            headers={"X-Episode-Id": "in-header"},
        )
    )
    assert body["info"]["episode_id"] == "in-query"
    assert [steps_of(client, e) for e in ("in-body", "in-query", "in-header")] == [1, 1, 0]


@pytest.mark.parametrize("carrier", ["body", "query", "header"])
def test_client_chosen_id_on_reset(client: TestClient, carrier: str) -> None:
    chosen = f"chosen.{carrier}:1"
    kwargs: dict[str, Any] = {
        "body": {"json": {"episode_id": chosen}},
        "query": {"params": {"episode_id": chosen}},
        "header": {"headers": {"X-Episode-Id": chosen}},
    }[carrier]
    body = ok(client.post(f"/reset/{TASK}", **kwargs))
    assert body["observation"]["episode_id"] == chosen == body["info"]["episode_id"]
    ok(client.post(f"/step/{TASK}", json=PROBE, params={"episode_id": chosen}))
    assert steps_of(client, chosen) == 1
    # resetting the same id replaces the episode with a fresh one
    again = ok(client.post("/reset", json={"task_id": TASK, "episode_id": chosen}))
    assert again["observation"]["step"] == 0
    assert steps_of(client, chosen) == 0
    # a client-chosen episode never becomes the task's default
    assert default_state(client, TASK)["episode_id"] != chosen


def test_reset_can_move_an_id_to_another_task(client: TestClient) -> None:
    ok(client.post(f"/reset/{TASK}", json={"episode_id": "mover"}))
    body = ok(client.post("/reset/easy_dedup_rename", json={"episode_id": "mover"}))
    assert body["observation"]["task_id"] == "easy_dedup_rename"
    assert ok(client.get("/state", params={"episode_id": "mover"}))["task_id"] == (
        "easy_dedup_rename"
    )


# ── the default episode ──────────────────────────────────────────────────────


def test_calls_without_id_use_the_task_default(client: TestClient) -> None:
    first = ok(client.post(f"/reset/{TASK}"))["info"]["episode_id"]
    ok(client.post(f"/reset/{TASK}", json={"episode_id": "side"}))
    assert ok(client.post(f"/step/{TASK}", json=PROBE))["info"]["episode_id"] == first
    assert ok(client.post("/step", json={"task_id": TASK, **PROBE}))["info"]["episode_id"] == first
    state = default_state(client, TASK)
    assert state["episode_id"] == first and state["step_count"] == 2
    assert steps_of(client, "side") == 0
    assert steps_of(client, first) == 2  # the default is reachable by its id too

    # a new reset without an id makes a new default; calls without an id follow it
    second = ok(client.post("/reset", json={"task_id": TASK}))["info"]["episode_id"]
    assert second != first
    body = ok(client.post(f"/step/{TASK}", json=PROBE))
    assert body["info"]["episode_id"] == second
    assert body["observation"]["step"] == 1
    assert default_state(client, TASK)["episode_id"] == second
    # the replaced default is never confused with the new one
    response = client.post(f"/step/{TASK}", json=PROBE, params={"episode_id": first})
    if response.status_code == 200:
        assert response.json()["info"]["episode_id"] == first
    else:
        assert response.json()["code"] == "UNKNOWN_EPISODE"


def test_each_task_has_its_own_default(client: TestClient) -> None:
    ids = {t: ok(client.post(f"/reset/{t}"))["info"]["episode_id"] for t in TASK_IDS}
    ok(client.post("/step/easy_dedup_rename", json={"operation": "remove_duplicates"}))
    for task_id in TASK_IDS:
        state = default_state(client, task_id)
        assert state["episode_id"] == ids[task_id]
        assert state["task_id"] == task_id
        assert state["step_count"] == (1 if task_id == "easy_dedup_rename" else 0)


def test_default_starts_on_first_use(client: TestClient) -> None:
    state = default_state(client, "medium_missing_dtype")
    assert state["task_id"] == "medium_missing_dtype"
    assert state["step_count"] == 0
    body = ok(client.post("/step/medium_missing_dtype", json=PROBE))
    assert body["info"]["episode_id"] == state["episode_id"]
    assert body["observation"]["step"] == 1


# ── the bounded store ────────────────────────────────────────────────────────


def test_full_store_answers_503_and_keeps_serving() -> None:
    with TestClient(create_app(Settings(max_episodes=2))) as small:
        ok(small.post(f"/reset/{TASK}", json={"episode_id": "one"}))
        ok(small.post(f"/reset/{TASK}", json={"episode_id": "two"}))
        ok(small.post(f"/step/{TASK}", json=PROBE, params={"episode_id": "two"}))
        refused = small.post(f"/reset/{TASK}", json={"episode_id": "three"})
        assert refused.status_code == 503
        error = refused.json()
        assert set(error) == {"detail", "code"}
        assert error["code"] == "SERVER_FULL"
        assert "maximum of 2 episodes" in error["detail"]
        assert small.get("/state", params={"episode_id": "three"}).json()["code"] == (
            "UNKNOWN_EPISODE"
        )
        # the live episodes are untouched and still served
        assert steps_of(small, "one") == 0
        assert steps_of(small, "two") == 1
        ok(small.post(f"/step/{TASK}", json=PROBE, params={"episode_id": "one"}))
        # an existing id can be reset; defaults do not count toward the capacity
        assert (
            ok(small.post(f"/reset/{TASK}", json={"episode_id": "two"}))["observation"]["step"] == 0
        )
        for task_id in TASK_IDS:
            ok(small.post(f"/reset/{task_id}"))
            ok(small.post(f"/step/{task_id}", json=PROBE))
        assert small.post("/reset", json={"episode_id": "four"}).status_code == 503


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(registry: TaskRegistry, clock: FakeClock) -> EpisodeStore:
    return EpisodeStore(registry, capacity=2, ttl_seconds=10, clock=clock)


def test_idle_episodes_are_evicted_to_free_capacity(store: EpisodeStore, clock: FakeClock) -> None:
    store.reset(TASK, episode_id="a")
    clock.now = 5
    store.reset(TASK, episode_id="b")
    clock.now = 9
    with pytest.raises(StoreFull):  # nothing idle long enough yet
        store.reset(TASK, episode_id="c")
    clock.now = 12  # "a" idle 12 s > ttl; "b" idle 7 s
    store.reset(TASK, episode_id="c")
    assert len(store) == 2
    with pytest.raises(UnknownEpisode):
        store.get("a")
    assert store.get("b").episode_id == "b"  # refreshes b at t=12
    clock.now = 21  # c idle 9 s, b idle 9 s: both live
    with pytest.raises(StoreFull):
        store.reset(TASK, episode_id="d")
    clock.now = 23  # both idle 11 s
    store.reset(TASK, episode_id="d")
    assert len(store) == 1
    with pytest.raises(UnknownEpisode):
        store.get("b")
    with pytest.raises(UnknownEpisode):
        store.get("c")


def test_use_keeps_an_episode_alive(store: EpisodeStore, clock: FakeClock) -> None:
    store.reset(TASK, episode_id="busy")
    store.reset(TASK, episode_id="idle")
    for t in (8, 16, 24):
        clock.now = t
        episode = store.get("busy")
        with episode.lock:
            episode.step(Action(operation="validate_schema"))
    store.reset(TASK, episode_id="new")  # evicts "idle" (24 s), keeps "busy" (0 s)
    assert store.get("busy").step_count == 3
    with pytest.raises(UnknownEpisode):
        store.get("idle")


def test_expired_episode_is_unknown(store: EpisodeStore, clock: FakeClock) -> None:
    """Idle past the ttl, an episode is gone, whether or not a reset has evicted it yet."""
    store.reset(TASK, episode_id="old")
    clock.now = 11
    with pytest.raises(UnknownEpisode):
        store.get("old")


def test_resetting_an_existing_id_works_when_full(store: EpisodeStore) -> None:
    store.reset(TASK, episode_id="a")
    store.reset(TASK, episode_id="b")
    replaced = store.reset("easy_dedup_rename", episode_id="a")
    assert store.get("a") is replaced
    assert replaced.spec.task_id == "easy_dedup_rename"
    assert len(store) == 2


def test_defaults_never_expire_nor_count(store: EpisodeStore, clock: FakeClock) -> None:
    defaults = {task_id: store.reset(task_id) for task_id in TASK_IDS}
    assert len(store) == 0
    store.reset(TASK, episode_id="a")
    store.reset(TASK, episode_id="b")
    clock.now = 10_000
    store.reset(TASK, episode_id="c")
    for task_id, episode in defaults.items():
        assert store.default(task_id) is episode
        assert store.get(episode.episode_id) is episode


# ── determinism and seeds ────────────────────────────────────────────────────


def script(metadata: dict[str, dict], task_id: str) -> list[Any]:
    """The optimal plan with refused steps mixed in."""
    plan = metadata[task_id]["solution"]
    return [
        {"operation": "no_such_operation"},
        *plan[:-1],
        {"operation": "fill_missing", "parameters": {"column": "nope"}},
        plan[-1],
        {"operation": "validate_schema"},  # after finish: refused
    ]


def run_script(client: TestClient, task_id: str, episode_id: str, actions: list, seed=3):
    answers = [client.post(f"/reset/{task_id}", json={"episode_id": episode_id, "seed": seed})]
    for action in actions:
        answers.append(
            client.post(f"/step/{task_id}", json=action, headers={"X-Episode-Id": episode_id})
        )
    answers.append(client.get("/state", params={"episode_id": episode_id}))
    return answers


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_same_inputs_give_identical_bytes_across_apps(
    metadata: dict[str, dict], task_id: str
) -> None:
    actions = script(metadata, task_id)
    runs = []
    for _ in range(2):
        with TestClient(create_app(Settings())) as fresh:
            runs.append(
                [(r.status_code, r.content) for r in run_script(fresh, task_id, "same", actions)]
            )
    assert runs[0] == runs[1]
    statuses = [status for status, _ in runs[0]]
    assert statuses.count(200) == len(metadata[task_id]["solution"]) + 2
    assert json.loads(runs[0][-1][1])["reward"]["total"] == 0.9999


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_two_episodes_differ_only_by_id(
    client: TestClient, metadata: dict[str, dict], task_id: str
) -> None:
    actions = script(metadata, task_id)
    first = run_script(client, task_id, "twin-one", actions)
    second = run_script(client, task_id, "twin-two", actions)
    for a, b in zip(first, second, strict=True):
        assert a.status_code == b.status_code
        assert a.text.replace("twin-one", "ID") == b.text.replace("twin-two", "ID")


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_seed_shuffles_rows_but_not_rewards(
    client: TestClient, metadata: dict[str, dict], task_id: str
) -> None:
    plan = metadata[task_id]["solution"]
    samples, rewards = {}, {}
    for seed in (1, 2, None):
        name = f"seed-{seed}"
        reset = ok(client.post(f"/reset/{task_id}", json={"episode_id": name, "seed": seed}))
        samples[seed] = reset["observation"]["sample_rows"]
        rewards[seed] = [
            ok(client.post(f"/step/{task_id}", json=a, params={"episode_id": name}))["reward"]
            for a in plan
        ]
        assert ok(client.get("/state", params={"episode_id": name}))["seed"] == seed
    assert samples[1] != samples[2]
    assert samples[1] != samples[None]
    assert rewards[1] == rewards[2] == rewards[None]
    assert rewards[1][-1]["total"] == 0.9999
    again = ok(client.post(f"/reset/{task_id}", json={"seed": 1}))
    assert again["observation"]["sample_rows"] == samples[1]


# ── the step budget ──────────────────────────────────────────────────────────


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_budget_ends_the_episode_after_max_steps(
    client: TestClient, metadata: dict[str, dict], task_id: str
) -> None:
    max_steps = metadata[task_id]["max_steps"]
    ok(client.post(f"/reset/{task_id}", json={"episode_id": "budget"}))
    headers = {"X-Episode-Id": "budget"}
    for number in range(1, max_steps + 1):
        if number < max_steps:  # refused steps do not use the step budget (their own: below)
            refused = client.post(f"/step/{task_id}", json={"operation": "nope"}, headers=headers)
            assert refused.status_code == 422
        body = ok(client.post(f"/step/{task_id}", json=PROBE, headers=headers))
        assert body["observation"]["step"] == number
        assert body["observation"]["steps_remaining"] == max_steps - number
        assert body["done"] is (number == max_steps)
    assert "Step budget used up" in body["observation"]["message"]
    state = ok(client.get("/state", params={"episode_id": "budget"}))
    assert state["done"] is True
    assert state["step_count"] == max_steps
    assert state["steps_remaining"] == 0
    after = client.post(f"/step/{task_id}", json=PROBE, headers=headers)
    assert after.status_code == 409 and after.json()["code"] == "EPISODE_FINISHED"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_refusals_have_an_allowance_of_the_step_budget(
    client: TestClient, metadata: dict[str, dict], task_id: str
) -> None:
    """Stalling with refused actions cannot keep an episode alive forever."""
    max_steps = metadata[task_id]["max_steps"]
    ok(client.post(f"/reset/{task_id}", json={"episode_id": "stall"}))
    headers = {"X-Episode-Id": "stall"}
    for _ in range(max_steps):
        refused = client.post(f"/step/{task_id}", json={"operation": "nope"}, headers=headers)
        assert refused.status_code == 422 and refused.json()["code"] == "UNKNOWN_OPERATION"
    state = ok(client.get("/state", params={"episode_id": "stall"}))
    assert (state["done"], state["step_count"]) == (True, 0)
    after = client.post(f"/step/{task_id}", json=PROBE, headers=headers)
    assert after.status_code == 409 and after.json()["code"] == "EPISODE_FINISHED"


def test_a_malformed_id_is_refused_wherever_it_is_given(client: TestClient) -> None:
    """The body's id wins over the query's and the header's, but each one given must be
    well-formed: an empty or malformed one is refused, not passed over, and nothing starts."""
    for params, headers in (({"episode_id": ""}, {}), ({}, {"X-Episode-Id": "no spaces"})):
        answer = client.post(
            f"/reset/{TASK}", json={"episode_id": "fine"}, params=params, headers=headers
        )
        assert (answer.status_code, answer.json()["code"]) == (422, "INVALID_ACTION")
    assert client.get("/state", params={"episode_id": "fine"}).status_code == 404
