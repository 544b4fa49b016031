"""Where engine work runs: on the event loop when small, in a worker thread when large.

A step on a small table takes less time than a hop to a worker thread (about a millisecond
on the machines we measured), so running it inline is faster for everyone; a large table
goes to a thread so that the event loop keeps serving other clients meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from starlette.concurrency import run_in_threadpool

from dataclean_env.server.metrics import ENGINE_SECONDS

INLINE_CELLS = 20_000

T = TypeVar("T")


def _timed(work: Callable[[], T]) -> T:
    start = time.perf_counter()
    try:
        return work()
    finally:
        ENGINE_SECONDS.observe(time.perf_counter() - start)


async def run_sized(work: Callable[[], T], cells: int) -> T:
    if cells <= INLINE_CELLS:
        return _timed(work)
    return await run_in_threadpool(_timed, work)
