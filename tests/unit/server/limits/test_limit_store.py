"""Caps counted together (`limit_store`): two processes' episode stores (and /ws guards) on
one SQLite limit store, each its own connection, as `server --workers 2` runs them; on an
injected clock."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from pathlib import Path
from threading import Thread

import pytest

from dataclean_env.errors import ClientQuotaReached, LimitsUnavailable, StoreFull, UnknownEpisode
from dataclean_env.schemas import Action
from dataclean_env.server.limits import limit_store
from dataclean_env.server.limits.limit_store import LimitDatabase, SharedCounts, limits_url
from dataclean_env.server.processes.affinity import Place, home
from dataclean_env.server.store.episode_store import EpisodeStore
from dataclean_env.tasks import default_registry
from tests.support import limit_database

TASK = "easy_dedup_rename"
IDLE = 60.0


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def homed(index: int, count: int) -> list[str]:
    return [i for i in (f"id-{n}" for n in range(1000)) if home(i, 2) == index][:count]


def store(path: Path, index: int, clock: Clock, capacity: int, per_client: int) -> EpisodeStore:
    return EpisodeStore(
        default_registry(),
        capacity,
        ttl_seconds=3600,
        clock=clock,
        idle_seconds=IDLE,
        per_client=per_client,
        place=Place(index, 2),
        counts=SharedCounts(limit_database(path, index)),
    )


def pair(tmp_path: Path, capacity: int = 3, per_client: int = 100) -> list[EpisodeStore]:
    clock = Clock()
    path = tmp_path / "limits.sqlite3"
    return [store(path, i, clock, capacity, per_client) for i in (0, 1)]


def test_the_capacity_counts_every_process(tmp_path: Path) -> None:
    """Capacity 3: three episodes on process 0 fill the server, so process 1 refuses."""
    zero, one = pair(tmp_path)
    for n, episode_id in enumerate(homed(0, 3)):
        zero.reset(TASK, episode_id=episode_id, client=f"c{n}")
    with pytest.raises(StoreFull) as refused:
        one.reset(TASK, episode_id=homed(1, 1)[0], client="d")
    assert refused.value.status == 503
    assert refused.value.detail == (
        "the server holds its maximum of 3 episodes, none idle for 60 s here (3 of them on "
        "the server's other processes); retry in 30 s or reuse an episode id"
    )
    assert refused.value.retry_after == 30  # none held here: the usual wait
    assert len(one) == 0


def test_full_means_together_and_a_process_evicts_only_its_own_idle(tmp_path: Path) -> None:
    zero, one = pair(tmp_path)
    clock = zero.clock
    first, second = homed(0, 2)
    zero.reset(TASK, episode_id=first, client="a")
    one.reset(TASK, episode_id=homed(1, 1)[0], client="b")
    assert isinstance(clock, Clock)
    clock.now = 10
    zero.reset(TASK, episode_id=second, client="c")
    clock.now = 65  # first (process 0) and process 1's episode are idle; second is not
    one.reset(TASK, episode_id=homed(1, 2)[1], client="d")  # evicts process 1's own
    assert len(one) == 1 and len(zero) == 2
    clock.now = 69  # only process 1's newest and process 0's second are in use
    zero.reset(TASK, episode_id=homed(0, 3)[2], client="e")  # evicts `first`, its own
    with pytest.raises(UnknownEpisode):
        zero.get(first)
    assert [len(zero), len(one)] == [2, 1]


def test_a_client_quota_counts_every_process(tmp_path: Path) -> None:
    zero, one = pair(tmp_path, capacity=100, per_client=2)
    for episode_id in homed(0, 2):
        zero.reset(TASK, episode_id=episode_id, client="q")
    with pytest.raises(ClientQuotaReached) as refused:
        one.reset(TASK, episode_id=homed(1, 1)[0], client="q")
    assert refused.value.detail == (
        "this client holds its maximum of 2 episodes, none idle for 60 s here (2 of them on "
        "the server's other processes); reuse one (reset its id) or retry in 30 s"
    )
    one.reset(TASK, episode_id=homed(1, 1)[0], client="r")  # another client is served
    zero.reset(TASK, episode_id=homed(0, 1)[0], client="q")  # resetting its own id: no place
    assert [len(zero), len(one)] == [2, 1]


def test_a_restarted_process_releases_what_its_predecessor_held(tmp_path: Path) -> None:
    """Process 1 dies holding two episodes; its successor in slot 1 holds none, so the
    server has room again, and the dead generation's late writes count for nothing."""
    zero, one = pair(tmp_path)
    for episode_id in homed(1, 2):
        one.reset(TASK, episode_id=episode_id, client="a")
    zero.reset(TASK, episode_id=homed(0, 1)[0], client="b")
    with pytest.raises(StoreFull):
        zero.reset(TASK, episode_id=homed(0, 2)[1], client="b")
    successor = store(tmp_path / "limits.sqlite3", 1, Clock(), 3, 100)
    one.reset(TASK, episode_id=homed(1, 1)[0], client="a")  # the old generation writes on
    for episode_id in homed(0, 3)[1:]:
        zero.reset(TASK, episode_id=episode_id, client="b")
    assert [len(zero), len(successor)] == [3, 0]


def test_an_unreachable_store_refuses_the_reset_and_never_a_step(tmp_path: Path) -> None:
    zero, _ = pair(tmp_path)
    held = zero.reset(TASK, episode_id=homed(0, 1)[0], client="a")
    with sqlite3.connect(tmp_path / "limits.sqlite3") as broken:
        broken.execute("DROP TABLE limit_locks")
    with pytest.raises(LimitsUnavailable) as refused:
        zero.reset(TASK, episode_id=homed(0, 2)[1], client="a")
    assert (refused.value.status, refused.value.retry_after) == (503, 5)
    assert refused.value.detail == (
        "the server's limit store (DCE_LIMITS_DB) cannot be reached (OperationalError), so "
        "it cannot count this call against its limits; retry in 5 s"
    )
    assert len(zero) == 1  # nothing was made
    episode = zero.get(held.episode_id)  # a step's lookup does not touch the store
    result = episode.step(Action(operation="remove_duplicates", parameters={}))
    assert "error" not in result.info, result.info
    zero.default(TASK)  # a default's first use (on a step) settles nothing either


def test_limits_urls() -> None:
    assert limits_url("/srv/limits.sqlite3") == "sqlite+pysqlite:////srv/limits.sqlite3"
    assert limits_url("postgres://u:p@db/x") == "postgresql+psycopg://u:p@db/x"
    assert limits_url("postgresql://u:p@db/x") == "postgresql+psycopg://u:p@db/x"


def test_two_processes_writers_take_turns_before_sqlite_would_make_one_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's own wait for its write lock sleeps 1, 2, 5, 10... ms between tries, which
    made the resets of `server --workers 2` wait tens to hundreds of ms. With that wait
    taken away (a timeout of 0: a writer that finds the lock held fails at once), two
    processes' writers, two threads each, still never find it held."""
    monkeypatch.setattr(limit_store, "BUSY_TIMEOUT_S", 0.0)
    path = tmp_path / "limits.sqlite3"
    processes = [limit_database(path, index) for index in (0, 1)]

    def count(row: tuple[float, float] | None) -> tuple[tuple[float, float], int]:
        return ((1.0 if row is None else row[0] + 1.0), 0.0), 0

    failures: list[LimitsUnavailable] = []

    def write(database: LimitDatabase) -> None:
        for _ in range(100):
            try:
                database.update_bucket("creations", "c", count)
            except LimitsUnavailable as failure:
                failures.append(failure)

    writers = [Thread(target=write, args=(database,)) for database in processes * 2]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert [failure.detail for failure in failures] == []
    with sqlite3.connect(path) as reader:
        (tokens,) = reader.execute("SELECT tokens FROM limit_buckets").fetchone()
    assert tokens == 400.0  # every update counted once
    for database in processes:
        database.close()


def test_a_writer_whose_turn_never_comes_finds_the_store_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limit_store, "WRITER_WAIT_S", 0.05)
    path = tmp_path / "limits.sqlite3"
    database = limit_database(path, 0)
    holder = os.open(f"{path}.lock", os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another process's writer, stuck in its turn
    try:
        with pytest.raises(LimitsUnavailable) as refused:
            database.update_bucket("creations", "c", lambda row: ((1.0, 0.0), 0))
    finally:
        os.close(holder)
    assert (refused.value.status, refused.value.retry_after) == (503, 5)
    assert refused.value.detail == (
        "the server's limit store (DCE_LIMITS_DB) has been busy for 0.05 s, so it cannot "
        "count this call against its limits; retry in 5 s"
    )
    assert database.update_bucket("creations", "c", lambda row: ((1.0, 0.0), 0)) == 0
    database.close()


def test_a_store_in_a_folder_that_does_not_exist_refuses_resets_and_starts(
    tmp_path: Path,
) -> None:
    database = LimitDatabase(str(tmp_path / "missing" / "limits.sqlite3"), 0)  # no raise
    with pytest.raises(LimitsUnavailable) as refused:
        database.update_bucket("creations", "c", lambda row: ((1.0, 0.0), 0))
    assert (refused.value.status, refused.value.retry_after) == (503, 5)
    assert refused.value.detail == (
        "the server's limit store (DCE_LIMITS_DB) cannot be reached (FileNotFoundError), so "
        "it cannot count this call against its limits; retry in 5 s"
    )
    database.close()
