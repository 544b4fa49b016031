"""Where engine work runs: on the event loop when small and cheap, in a worker thread else.

A step on a small table takes less time than a hop to a worker thread (about a millisecond
on the machines we measured), so running it inline is faster for everyone; a large table
goes to a thread so that the event loop keeps serving other clients meanwhile. So does an
operation whose cost the client controls beyond the table's size (`Operation.slow`:
regex_replace, program): it may use the whole step time limit, and on the event loop it
would stall every other client, /health included. Such steps share a few threads of their
own, so they cannot take the pool's threads from everyone else either.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import anyio
from starlette.concurrency import run_in_threadpool

from dataclean_env.errors import EnvError
from dataclean_env.operations import canonical_name, get_operation
from dataclean_env.server.metrics import ENGINE_SECONDS

INLINE_CELLS = 20_000
SLOW_THREADS = 4

T = TypeVar("T")
_slow_limiter: anyio.CapacityLimiter | None = None


def is_slow(operation: str) -> bool:
    """True for an operation whose time the client controls (an unknown name: False)."""
    try:
        return get_operation(canonical_name(operation)).slow
    except EnvError:
        return False


def _timed(work: Callable[[], T]) -> T:
    start = time.perf_counter()
    try:
        return work()
    finally:
        ENGINE_SECONDS.observe(time.perf_counter() - start)


async def run_sized(work: Callable[[], T], cells: int, slow: bool = False) -> T:
    global _slow_limiter
    if slow:
        if _slow_limiter is None:
            _slow_limiter = anyio.CapacityLimiter(SLOW_THREADS)
        return await anyio.to_thread.run_sync(_timed, work, limiter=_slow_limiter)
    if cells <= INLINE_CELLS:
        return _timed(work)
    return await run_in_threadpool(_timed, work)
