"""Room in a full store: idle episodes make way, episodes in use never do, and one client
cannot take the pool (unit, on an injected clock; then over real HTTP, keyed on the peer)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from dataclean_env.errors import ClientQuotaReached, StoreFull, UnknownEpisode
from dataclean_env.server.store.episode_store import EpisodeStore
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry
from tests.web import LiveServer

TASK = "easy_dedup_rename"
IDLE = 60.0


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def store_of(
    registry: TaskRegistry, clock: FakeClock, capacity: int, per_client: int = 100
) -> EpisodeStore:
    return EpisodeStore(
        registry, capacity, ttl_seconds=3600, clock=clock, idle_seconds=IDLE, per_client=per_client
    )


def test_a_full_store_evicts_the_least_recently_used_idle_episode(registry: TaskRegistry) -> None:
    clock = FakeClock()
    store = store_of(registry, clock, capacity=2)
    store.reset(TASK, episode_id="a", client="x")
    clock.now = 10
    store.reset(TASK, episode_id="b", client="x")
    clock.now = 30
    store.get("a")  # a used at 30: b is now the least recently used
    clock.now = 75  # b idle 65 s (>= 60), a idle 45 s
    store.reset(TASK, episode_id="c", client="y")
    assert len(store) == 2
    with pytest.raises(UnknownEpisode):
        store.get("b")
    assert [store.get(i).episode_id for i in ("a", "c")] == ["a", "c"]


def test_a_store_full_of_episodes_in_use_refuses_and_says_when(registry: TaskRegistry) -> None:
    clock = FakeClock()
    store = store_of(registry, clock, capacity=2)
    store.reset(TASK, episode_id="a", client="x")
    clock.now = 10
    store.reset(TASK, episode_id="b", client="x")
    clock.now = 40  # a idle 40 s, b 30 s: neither may go
    with pytest.raises(StoreFull) as refused:
        store.reset(TASK, episode_id="c", client="y")
    assert refused.value.status == 503 and refused.value.code == "SERVER_FULL"
    assert refused.value.retry_after == 20  # a turns idle at 60
    assert refused.value.detail == (
        "the server holds its maximum of 2 episodes, none idle for 60 s; "
        "retry in 20 s or reuse an episode id"
    )
    assert [store.get(i).episode_id for i in ("a", "b")] == ["a", "b"]
    with pytest.raises(UnknownEpisode):
        store.get("c")


def test_a_client_at_its_quota_is_refused_while_another_is_served(
    registry: TaskRegistry,
) -> None:
    clock = FakeClock()
    store = store_of(registry, clock, capacity=10, per_client=2)
    store.reset(TASK, episode_id="a", client="x")
    store.reset(TASK, episode_id="b", client="x")
    clock.now = 10
    with pytest.raises(ClientQuotaReached) as refused:
        store.reset(TASK, episode_id="c", client="x")
    assert refused.value.status == 503 and refused.value.code == "CLIENT_QUOTA_REACHED"
    assert refused.value.retry_after == 50
    assert refused.value.detail == (
        "this client holds its maximum of 2 episodes, none idle for 60 s; "
        "reuse one (reset its id) or retry in 50 s"
    )
    store.reset(TASK, episode_id="d", client="y")  # another client is served
    store.reset(TASK, episode_id="a", client="x")  # reusing an own id takes no more room
    clock.now = 61  # b idle 61 s, a (reset at 10) 51 s: x's own b makes room
    store.reset(TASK, episode_id="c", client="x")
    with pytest.raises(UnknownEpisode):
        store.get("b")
    assert [store.get(i).episode_id for i in ("a", "c", "d")] == ["a", "c", "d"]


def test_a_replaced_default_in_use_is_not_dropped_from_a_full_store(
    registry: TaskRegistry,
) -> None:
    """A reset without an id moves the task's previous default (a server-issued id) among
    the episodes; in a store full of episodes in use, the new reset is refused instead."""
    clock = FakeClock()
    store = store_of(registry, clock, capacity=1)
    first = store.reset(TASK, client="x").episode_id
    store.reset(TASK, episode_id="named", client="y")
    clock.now = 10
    store.get(first)  # the default in use
    with pytest.raises(StoreFull):
        store.reset(TASK, client="x")
    assert store.default(TASK).episode_id == first
    clock.now = 61  # "named" idle 61 s: it makes way
    second = store.reset(TASK, client="x").episode_id
    assert store.default(TASK).episode_id == second != first
    assert store.get(first).episode_id == first
    with pytest.raises(UnknownEpisode):
        store.get("named")


def test_resets_without_ids_never_fill_a_clients_quota(registry: TaskRegistry) -> None:
    """CleanifyAI's clients reset without an id every episode: each reset replaces the
    task's default, and a replaced default that no call addressed by its id makes way first,
    whatever its age (even for the reset replacing it). One that was addressed stays, like
    any episode in use."""
    clock = FakeClock()
    store = store_of(registry, clock, capacity=3, per_client=3)
    kept = store.reset(TASK, client="x").episode_id
    store.get(kept)  # addressed by its id: in use
    defaults = [store.reset(TASK, client="x").episode_id for _ in range(10)]
    assert store.default(TASK).episode_id == defaults[-1]
    assert store.get(kept).episode_id == kept
    for dropped in defaults[:-2]:
        with pytest.raises(UnknownEpisode):
            store.get(dropped)
    store.reset(TASK, episode_id="named", client="x")  # defaults[-2] makes way for it
    with pytest.raises(UnknownEpisode):
        store.get(defaults[-2])
    with pytest.raises(ClientQuotaReached):  # kept, named and the default: all in use
        store.reset(TASK, episode_id="more", client="x")
    again = store.reset(TASK, client="x").episode_id  # replacing defaults[-1], unaddressed
    assert store.default(TASK).episode_id == again
    with pytest.raises(UnknownEpisode):
        store.get(defaults[-1])
    store.reset(TASK, episode_id="other", client="y")  # the last place in the store
    with pytest.raises(StoreFull):
        store.reset(TASK, episode_id="more", client="y")
    assert [store.get(i).episode_id for i in (kept, "named", "other")] == [kept, "named", "other"]


# ── over the wire: the client is the peer address uvicorn saw ────────────────


def http_from(server: LiveServer, address: str) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=server.url, transport=transport, timeout=30)


@pytest.fixture
def small_server() -> Iterator[LiveServer]:
    # A quota of 2 (a quarter of the 8 places, the most a quota may be).
    with LiveServer(Settings(max_episodes=8, episodes_per_client=2)) as server:
        yield server


def reset(http: httpx.Client, episode_id: str) -> httpx.Response:
    return http.post(f"/reset/{TASK}", json={"episode_id": episode_id})


def test_quota_and_full_store_over_http(small_server: LiveServer) -> None:
    with (
        http_from(small_server, "127.0.0.1") as one,
        http_from(small_server, "127.0.0.2") as two,
        http_from(small_server, "127.0.0.5") as five,
    ):
        assert [reset(one, i).status_code for i in ("one-a", "one-b")] == [200, 200]
        quota = reset(one, "one-c")
        assert (quota.status_code, quota.json()["code"]) == (503, "CLIENT_QUOTA_REACHED")
        assert 1 <= int(quota.headers["retry-after"]) <= 300
        assert "maximum of 2 episodes" in quota.json()["detail"]
        assert reset(two, "two-a").status_code == 200  # another client is served
        for address in ("127.0.0.3", "127.0.0.4"):  # 8 episodes, all used just now
            with http_from(small_server, address) as filler:
                assert [reset(filler, f"{address}-{n}").status_code for n in "ab"] == [200] * 2
        assert reset(two, "two-b").status_code == 200
        full = reset(five, "five-a")
        assert (full.status_code, full.json()["code"]) == (503, "SERVER_FULL")
        assert 1 <= int(full.headers["retry-after"]) <= 300
        assert "maximum of 8 episodes" in full.json()["detail"]
        states = [one.get("/state", params={"episode_id": i}) for i in ("one-a", "one-b")]
        assert [s.status_code for s in states] == [200, 200]
        for refused in ("one-c", "five-a"):
            assert two.get("/state", params={"episode_id": refused}).status_code == 404


def test_a_client_resetting_without_ids_plays_on_over_http(small_server: LiveServer) -> None:
    """More resets without an id than the per-client quota (2) and the store (8) hold, each
    with its steps: every one is served, as CleanifyAI's clients expect."""
    with http_from(small_server, "127.0.0.1") as one:
        answers = []
        for _ in range(10):
            answers.append(one.post(f"/reset/{TASK}", json={}).status_code)
            step = one.post(f"/step/{TASK}", json={"operation": "remove_duplicates"})
            answers.append(step.status_code)
            assert step.json()["observation"]["step"] == 1
        assert answers == [200] * 20
