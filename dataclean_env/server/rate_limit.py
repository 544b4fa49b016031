"""A token bucket per client address, for the things that cost the server memory to create:
episodes (REST resets) and OpenEnv sessions (/mcp session create, /ws connects)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from dataclean_env.errors import RateLimited

MAX_CLIENTS = 10_000  # buckets kept; full ones are forgotten first when there are more


class RateLimiter:
    def __init__(self, per_second: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.per_second = per_second
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, at)
        self._lock = threading.Lock()

    def take(self, client: str, what: str) -> None:
        """Spend one token of `client`'s bucket, or raise RateLimited (429, Retry-After)."""
        now = self.clock()
        with self._lock:
            tokens, at = self._buckets.get(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - at) * self.per_second)
            if tokens < 1:
                wait = math.ceil((1 - tokens) / self.per_second) if self.per_second > 0 else 60
                self._buckets[client] = (tokens, now)
                raise RateLimited(
                    f"too many {what} from this client: at most {self.burst} at once and "
                    f"{self.per_second:g} per second after that; retry in {wait} s",
                    retry_after=wait,
                )
            self._buckets[client] = (tokens - 1, now)
            if len(self._buckets) > MAX_CLIENTS:
                self._forget_full(now)

    def _forget_full(self, now: float) -> None:
        refill = self.burst / self.per_second if self.per_second > 0 else math.inf
        for client in [c for c, (_, at) in self._buckets.items() if now - at >= refill]:
            del self._buckets[client]


def client_key(scope: Mapping[str, Any]) -> str:
    """The client's address (uvicorn puts X-Forwarded-For's here for trusted proxies)."""
    client = scope.get("client")
    return client[0] if client else "unknown"
