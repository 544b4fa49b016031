"""Issued episodes in the episode store (the leaderboard's): found by id whatever the
store's idle limit, joined rather than replaced by a reset, removed only by withdraw."""

from __future__ import annotations

import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import ClientQuotaReached, StoreFull, UnknownEpisode
from dataclean_env.server.limits.limit_store import TOTAL
from dataclean_env.server.store.episode_store import EpisodeStore
from dataclean_env.tasks import default_registry


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_issued_episodes_never_expire_and_a_reset_joins_them() -> None:
    # A machine up for more than the idle limit: monotonic time is far past ttl.
    clock = Clock(10_000.0)
    registry = default_registry()
    store = EpisodeStore(registry, capacity=4, ttl_seconds=60.0, clock=clock)
    issued = Episode("lb-issued", registry.make("crm", 0))
    store.issue("lb-issued", lambda: issued)
    assert store.get("lb-issued") is issued
    clock.now += 3600
    assert store.get("lb-issued") is issued
    assert store.reset("orders", 3, "lb-issued") is issued  # joined, not replaced
    store.withdraw("lb-issued")
    with pytest.raises(UnknownEpisode):
        store.get("lb-issued")


def test_a_lost_leaderboard_id_is_unknown_and_never_created() -> None:
    store = EpisodeStore(default_registry(), capacity=4, ttl_seconds=60.0)
    lost = "lb-" + "0123456789abcdef" * 2
    with pytest.raises(UnknownEpisode, match="no leaderboard episode 'lb-0123"):
        store.reset("crm", 0, lost)
    assert len(store) == 0
    with pytest.raises(UnknownEpisode):
        store.get(lost)


def held_ids(store: EpisodeStore) -> set[str]:
    return set(store._episodes)


def test_a_reset_drops_every_episode_past_its_ttl_counted_from_its_own_last_use() -> None:
    clock = Clock(1_000.0)
    store = EpisodeStore(default_registry(), capacity=16, ttl_seconds=60.0, clock=clock)
    store.reset("easy_dedup_rename", None, "old")
    clock.now += 30
    store.reset("easy_dedup_rename", None, "kept")
    clock.now += 20
    store.get("old")  # used again: its hour starts over
    clock.now += 45  # "kept" is 65 s unused, "old" 45 s
    store.reset("easy_dedup_rename", None, "new")
    assert held_ids(store) == {"old", "new"}
    clock.now += 16  # "old" is 61 s unused
    store.reset("easy_dedup_rename", None, "newer")
    assert held_ids(store) == {"new", "newer"}


def test_a_replaced_default_expires_a_ttl_after_its_own_last_use() -> None:
    # The default a reset without an id replaces is kept under its id, with its own last
    # use: older than every episode the store held.
    clock = Clock(1_000.0)
    store = EpisodeStore(default_registry(), capacity=16, ttl_seconds=60.0, clock=clock)
    first = store.reset("easy_dedup_rename").episode_id
    store.get(first)  # addressed by its id: kept when replaced
    clock.now += 50
    store.reset("easy_dedup_rename", None, "fresh")
    second = store.reset("easy_dedup_rename").episode_id  # replaces the first default
    assert first in held_ids(store) and second not in held_ids(store)
    clock.now += 11  # the first default is 61 s unused, "fresh" 11 s
    store.reset("easy_dedup_rename", None, "fresher")
    assert held_ids(store) == {"fresh", "fresher"}


def test_a_client_quota_counts_the_clients_own_episodes_and_frees_with_them() -> None:
    clock = Clock(1_000.0)
    store = EpisodeStore(
        default_registry(), capacity=16, ttl_seconds=60.0, idle_seconds=10.0, per_client=2,
        clock=clock,
    )  # fmt: skip
    store.reset("easy_dedup_rename", None, "a1", client="a")
    store.reset("easy_dedup_rename", None, "b1", client="b")
    store.reset("easy_dedup_rename", None, "a2", client="a")
    store.reset("easy_dedup_rename", None, "a2", client="a")  # a reset of its own id: no room
    with pytest.raises(ClientQuotaReached):
        store.reset("easy_dedup_rename", None, "a3", client="a")
    clock.now += 11  # a1, a2 and b1 are idle: a's oldest makes room for a3
    store.get("a2")
    store.reset("easy_dedup_rename", None, "a3", client="a")
    assert held_ids(store) == {"b1", "a2", "a3"}
    assert store._rows() == {TOTAL: 3, "a": 2, "b": 1}  # what the process publishes


def test_a_built_issued_episode_holds_a_place_and_its_joiners_quota_until_it_ends() -> None:
    """A first join takes a place under its joiner's quota (refused as a reset would be,
    the id still issued); in play it never idles out nor makes room; its end gives both
    back, and it stays readable until withdrawn."""
    clock = Clock(1_000.0)
    registry = default_registry()
    store = EpisodeStore(
        registry, capacity=2, ttl_seconds=60.0, idle_seconds=10.0, per_client=1, clock=clock
    )
    joined: list[str] = []

    def build(episode_id: str) -> Episode:
        return Episode(episode_id, registry.make("easy_dedup_rename", 0))

    for name in ("lb-1", "lb-2", "lb-3"):
        store.issue(name, lambda name=name: build(name), lambda e: joined.append(e.episode_id))
    assert len(store) == 0 and store.held() == 3  # issued: nothing built
    first = store.get("lb-1", client="a")
    assert store.get("lb-1", client="a") is first and joined == ["lb-1"]
    with pytest.raises(ClientQuotaReached):
        store.get("lb-2", client="a")
    store.get("lb-2", client="b")
    with pytest.raises(StoreFull):
        store.reset("easy_dedup_rename", None, "c1", client="c")
    with pytest.raises(StoreFull):
        store.get("lb-3", client="c")
    clock.now += 3600  # in play: neither idles out nor makes room
    with pytest.raises(StoreFull):
        store.get("lb-3", client="c")
    assert joined == ["lb-1", "lb-2"] and len(store) == 2 and store.held() == 3
    assert store._rows() == {TOTAL: 2, "a": 1, "b": 1}
    store.release("lb-1")  # its end
    assert store.get("lb-1", client="z") is first  # readable, in no one's quota
    store.get("lb-3", client="c")
    assert joined == ["lb-1", "lb-2", "lb-3"] and len(store) == 2
    store.withdraw("lb-2")  # dropped in play: its place goes with it
    assert len(store) == 1 and store.held() == 2
    store.reset("easy_dedup_rename", None, "b1", client="b")
    assert held_ids(store) == {"lb-3", "b1"}
