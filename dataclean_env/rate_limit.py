"""The one rate limiter: a token bucket per client address, for what costs the server to
create or keep (episodes by REST resets, OpenEnv sessions, leaderboard runs, self-reported
submissions).

A bucket holds at most `burst` tokens and refills at `per_second`; each counted call spends
one, and a call that finds less than one is refused (RateLimited: 429, Retry-After) and
spends nothing. "N per hour" is a burst of N refilling at N per hour.

The buckets live in this process's memory, or, when the server runs several processes
(`server --workers N`, or replicas), in the limit store they share (DCE_LIMITS_DB: a SQLite
file or a PostgreSQL URL, `limit_store`), so a limit holds for the whole server, not once
per process. Only counted calls touch it (never a step).
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from dataclean_env.errors import RateLimited

Row = tuple[float, float]  # (tokens, at)
# A bucket's row (None: unseen) -> its new row and the seconds to wait (0: a token spent).
Change = Callable[[Row | None], tuple[Row, int]]
MAX_CLIENTS = 10_000  # buckets kept; refilled ones are forgotten first when there are more
HOUR = 3600.0


class Buckets:
    """Buckets in memory: name -> client -> (tokens, at)."""

    shared = False  # True: in a database (an update may wait on it)

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str], Row] = {}
        self._lock = threading.Lock()

    def update(self, name: str, client: str, change: Change) -> int:
        """Apply `change` to the bucket atomically; its wait."""
        with self._lock:
            row, result = change(self._rows.get((name, client)))
            self._rows[(name, client)] = row
            return result

    def forget(self, before: Callable[[str], float]) -> None:
        with self._lock:
            if len(self._rows) > MAX_CLIENTS:
                for key in [k for k, (_, at) in self._rows.items() if at < before(k[0])]:
                    del self._rows[key]


class RateLimit:
    def __init__(
        self,
        name: str,
        burst: int | None,  # None: no limit (the local profile's creations)
        per_second: float,
        buckets: Buckets | None = None,
        clock: Callable[[], float] = time.time,  # wall time: the same in every process
    ):
        self.name, self.burst, self.per_second = name, burst, per_second
        self.buckets = buckets or Buckets()
        self.clock = clock

    @classmethod
    def per_hour(
        cls, name: str, count: int, buckets: Buckets | None = None, **kw: Any
    ) -> RateLimit:
        return cls(name, count, count / HOUR, buckets, **kw)

    def _refill(self) -> str:
        if self.per_second * HOUR < 100:
            return f"{self.per_second * HOUR:g} per hour"
        return f"{self.per_second:g} per second"

    async def take_async(self, client: str, what: str | None = None) -> None:
        """`take` from the event loop: in a thread when the buckets are in a database."""
        if self.buckets.shared:
            await asyncio.to_thread(self.take, client, what)
        else:
            self.take(client, what)

    def take(self, client: str, what: str | None = None) -> None:
        """Spend one token of `client`'s bucket, or raise RateLimited (spending nothing)."""
        if self.burst is None:
            return
        now, burst = self.clock(), float(self.burst)

        def change(row: Row | None) -> tuple[Row, int]:
            tokens, at = row if row is not None else (burst, now)
            tokens = min(burst, tokens + max(0.0, now - at) * self.per_second)
            if tokens < 1:
                wait = math.ceil((1 - tokens) / self.per_second) if self.per_second > 0 else 60
                return (tokens, now), wait
            return (tokens - 1, now), 0

        wait = self.buckets.update(self.name, client, change)
        self.buckets.forget(self._full_before)
        if wait:
            raise RateLimited(
                f"too many {what or self.name} from this client: at most {self.burst} at once "
                f"and {self._refill()} after that; retry in {wait} s",
                retry_after=wait,
            )

    def _full_before(self, name: str) -> float:
        """Buckets last used before this time have refilled: forgetting them changes nothing
        (for this limit's name; another's keeps its rows)."""
        if name != self.name or self.burst is None:
            return -math.inf
        refill = self.burst / self.per_second if self.per_second > 0 else math.inf
        return self.clock() - refill


# The client of the request or socket being served (set by the guards, `client_key`), for
# work that is shared out by client deep below the door.
CALLER: ContextVar[str] = ContextVar("dce_caller", default="unknown")


def client_key(scope: Mapping[str, Any]) -> str:
    """The client's address (uvicorn puts X-Forwarded-For's here for trusted proxies)."""
    client = scope.get("client")
    return client[0] if client else "unknown"
