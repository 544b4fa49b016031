"""The open sessions of each client, within DCE_SESSIONS_PER_CLIENT: /ws sockets and MCP
sessions alike, so that no one address takes the whole pool of sessions (DCE_MAX_SESSIONS),
which both doors share. Counted per client as the trusted proxy saw it (`client_key`), in
the shared limit store when the processes count together (else each counts its share)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from dataclean_env.errors import ClientQuotaReached, EnvError
from dataclean_env.server.affinity import Place
from dataclean_env.server.limit_store import Counts
from dataclean_env.server.rate_limit import RateLimit
from dataclean_env.settings import Settings


class SessionQuota:
    """One per app: every door that opens a session takes its place here."""

    def __init__(self, settings: Settings, limiter: RateLimit, counts: Counts | None = None):
        self.limiter = limiter
        self.counts = counts or Counts()
        # The whole server's quota when the processes count together, else this one's share.
        quota = settings.sessions_per_client
        self.per_client = quota if self.counts.shared else Place.of(settings).share(quota)
        self.open: dict[str, int] = {}  # client -> open sessions (changed only in `counts`)

    async def take_async(self, client: str) -> None:
        await self._run(lambda: self.take(client))

    async def release_async(self, client: str) -> None:
        await self._run(lambda: self.release(client))

    async def _run(self, work: Callable[[], None]) -> None:
        # A shared store may keep a call waiting: in a thread, not on the event loop.
        await asyncio.to_thread(work) if self.counts.shared else work()

    def take(self, client: str) -> None:
        """Count one more open session of `client`, or refuse (nothing counted or spent);
        a session creation, so it spends a token of the creation rate too."""
        with self.counts.settle("sockets", client) as others:
            if others.client + self.open.get(client, 0) >= self.per_client:
                raise ClientQuotaReached(
                    f"this client has {self.per_client} open sessions (/ws and MCP), its "
                    f"quota (DCE_SESSIONS_PER_CLIENT); close one or retry in "
                    f"{ClientQuotaReached.retry_after} s"
                )
            others.rows = {client: self._count(client, +1)}
        # After the count (a refused session spends no token), not inside it: the token's
        # transaction must not wait on the count's (one SQLite file has one writer).
        try:
            self.limiter.take(client, "session creations")
        except EnvError:
            self.release(client)
            raise

    def release(self, client: str) -> None:
        counted = False
        with contextlib.suppress(EnvError), self.counts.settle("sockets", client) as mine:
            mine.rows = {client: self._count(client, -1)}
            counted = True
        if not counted:  # the store is down: this process's own count still goes down
            self._count(client, -1)

    def _count(self, client: str, change: int) -> int:
        if (count := self.open.get(client, 0) + change) > 0:
            self.open[client] = count
        else:
            self.open.pop(client, None)
        return max(count, 0)
