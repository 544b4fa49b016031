"""Per-client rate limits: at most `per_hour` events in any sliding hour, in memory.

At most `max_clients` clients are tracked (the least recently seen is forgotten first), so
a flood of addresses cannot grow the table without bound.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from dataclean_env.errors import RateLimited

WINDOW_S = 3600.0


class RateLimit:
    def __init__(
        self,
        what: str,
        per_hour: int,
        max_clients: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.what = what
        self.per_hour = per_hour
        self.max_clients = max_clients
        self.clock = clock
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, client: str) -> None:
        """Count one event of `client`, or raise RateLimited (counting nothing)."""
        now = self.clock()
        with self._lock:
            times = self._seen.pop(client, None) or deque()
            while times and times[0] <= now - WINDOW_S:
                times.popleft()
            self._seen[client] = times
            while len(self._seen) > self.max_clients:
                self._seen.popitem(last=False)
            if len(times) >= self.per_hour:
                wait = int(times[0] + WINDOW_S - now) + 1
                raise RateLimited(
                    f"at most {self.per_hour} {self.what} per hour per client; retry in {wait} s"
                )
            times.append(now)
