"""Issued episodes in the episode store (the leaderboard's): found by id whatever the
store's idle limit, joined rather than replaced by a reset, removed only by withdraw."""

from __future__ import annotations

import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import UnknownEpisode
from dataclean_env.server.episode_store import EpisodeStore
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
