"""The SQL sandbox's processes: a job past its time or memory ends its worker, which is
replaced; the caller gets a typed answer either way. The jobs are plain library calls
(`os.getpid` names the worker that ran it), so each verdict is exact and speed-free."""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest

from dataclean_env.sandbox import sql_jobs
from dataclean_env.sandbox.pool import WorkerDied, WorkerPool, WorkerTimedOut, WorkerUnavailable

HEADROOM = 256 * 2**20


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, headroom_bytes=HEADROOM, grace_seconds=0.2) as made:
        yield made


def test_a_job_past_its_time_ends_its_worker(pool: WorkerPool) -> None:
    first = pool.run(os.getpid, seconds=30)
    with pytest.raises(WorkerTimedOut):
        pool.run(time.sleep, 3600, seconds=0.05)
    assert pool.run(os.getpid, seconds=30) not in (first, os.getpid())


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_DATA is enforced by Linux")
def test_a_job_past_the_memory_cap_fails_and_the_pool_serves_on(pool: WorkerPool) -> None:
    with pytest.raises(MemoryError):
        pool.run(bytearray, 2 * HEADROOM, seconds=30)
    assert pool.run(len, bytearray(HEADROOM // 4), seconds=30) == HEADROOM // 4


@pytest.mark.skipif(sys.platform != "linux", reason="VmData is read from /proc")
def test_a_worker_left_holding_memory_is_replaced() -> None:
    # DuckDB's allocator keeps what a large query took: the next job would have less room.
    table = pd.DataFrame({"x": [1]})
    with WorkerPool(1, 2 * HEADROOM, 0.2, preload=[sql_jobs.__name__]) as pool:
        first = pool.run(os.getpid, seconds=30)
        big = "SELECT len(range(30000000)) AS n"  # a 240 MB list
        answer = pool.run(sql_jobs.run_query, table, big, math.inf, seconds=math.inf)
        assert answer[1] == [(30000000,)]
        assert pool.run(os.getpid, seconds=30) != first


def test_a_worker_that_dies_is_reported_and_replaced(pool: WorkerPool) -> None:
    first = pool.run(os.getpid, seconds=30)
    with pytest.raises(WorkerDied, match="exit code 3"):
        pool.run(os._exit, 3, seconds=30)
    assert pool.run(os.getpid, seconds=30) != first


def test_a_job_s_own_error_reaches_the_caller_and_the_worker_stays(pool: WorkerPool) -> None:
    first = pool.run(os.getpid, seconds=30)
    with pytest.raises(ValueError, match="invalid literal"):
        pool.run(int, "x", seconds=30)
    assert pool.run(os.getpid, seconds=30) == first


def test_an_untimed_job_is_waited_for(pool: WorkerPool) -> None:
    assert pool.run(time.sleep, 0.3, seconds=math.inf) is None


def test_closing_the_pool_ends_its_workers() -> None:
    with WorkerPool(size=2, headroom_bytes=HEADROOM, grace_seconds=0.2) as pool:
        pids = {pool.run(os.getpid, seconds=30)}
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_worker_that_cannot_start_is_reported() -> None:
    broken = WorkerPool(1, HEADROOM, 0.2, preload=["dataclean_env.no_such_module"])
    with broken, pytest.raises(WorkerUnavailable, match="exit code 1"):
        broken.run(os.getpid, seconds=30)


def test_a_job_that_cannot_be_sent_is_refused_and_the_pool_keeps_its_room(
    pool: WorkerPool,
) -> None:
    for _ in range(3):  # more than the pool's one worker: none may be lost
        with pytest.raises(AttributeError, match="pickle"):
            pool.run(len, lambda: None, seconds=30)
    assert pool.run(len, "abc", seconds=30) == 3


def test_a_worker_that_takes_no_job_in_its_time_is_ended(pool: WorkerPool) -> None:
    # A stopped worker reads nothing: a job larger than the socket's buffers cannot be handed
    # over, and the handover counts against the job's time like the rest of it.
    stopped = pool.run(os.getpid, seconds=30)
    os.kill(stopped, signal.SIGSTOP)
    handing = ThreadPoolExecutor(1)
    try:
        pending = handing.submit(pool.run, len, b"x" * 2**25, seconds=0.2)
        with pytest.raises(WorkerTimedOut, match="took no job"):
            pending.result(timeout=60)  # before: the handover waited for the worker forever
    finally:
        with contextlib.suppress(ProcessLookupError):  # it was killed and reaped
            os.kill(stopped, signal.SIGCONT)
        handing.shutdown(wait=False)
    assert pool.run(os.getpid, seconds=30) != stopped
