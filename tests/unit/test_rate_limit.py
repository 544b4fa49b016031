"""The one rate limiter (`rate_limit.RateLimit`): a token bucket per client, in memory or in
the limit store several processes share (`limit_store`, here a SQLite file)."""

from __future__ import annotations

import pytest

from dataclean_env.errors import RateLimited
from dataclean_env.rate_limit import Buckets, RateLimit
from dataclean_env.server.limits.limit_store import LimitDatabase, SharedBuckets


def shared_buckets(path, slot: int = 0) -> SharedBuckets:
    return SharedBuckets(LimitDatabase(str(path), slot))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("shared", [False, True])
def test_a_burst_then_the_refill_rate_per_client(tmp_path, shared: bool) -> None:
    clock = Clock()
    buckets = shared_buckets(tmp_path / "limits.sqlite3") if shared else Buckets()
    limit = RateLimit.per_hour("runs", 2, buckets, clock=clock)
    limit.take("a")
    limit.take("a")
    with pytest.raises(RateLimited) as refused:
        limit.take("a")
    assert refused.value.detail == (
        "too many runs from this client: at most 2 at once and 2 per hour after that; "
        "retry in 1800 s"
    )
    assert refused.value.retry_after == 1800
    limit.take("b")  # another client has its own bucket
    clock.now += 1800  # one token back
    limit.take("a")
    with pytest.raises(RateLimited):
        limit.take("a")


def test_processes_sharing_the_file_share_each_bucket(tmp_path) -> None:
    """Two processes' limiters (each its own connection to the file) spend one bucket."""
    clock = Clock()
    path = tmp_path / "limits.sqlite3"
    first, second = (
        RateLimit("creations", 3, 0.5, shared_buckets(path, slot), clock=clock) for slot in (0, 1)
    )
    first.take("c")
    second.take("c")
    first.take("c")
    for limit in (first, second):
        with pytest.raises(RateLimited):
            limit.take("c")
    clock.now += 2.0  # 0.5 per second: one token
    second.take("c")
    with pytest.raises(RateLimited):
        first.take("c")


def test_limits_of_other_names_keep_their_own_buckets(tmp_path) -> None:
    path = tmp_path / "limits.sqlite3"
    runs = RateLimit.per_hour("runs", 1, shared_buckets(path, 0))
    submissions = RateLimit.per_hour("submissions", 1, shared_buckets(path, 1))
    runs.take("c")
    submissions.take("c")
    with pytest.raises(RateLimited):
        runs.take("c")
