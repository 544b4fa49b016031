"""The open sessions of each client, within its quota (`client_limits.session_quota`): /ws
sockets and MCP sessions alike, so that no one address takes the whole pool of sessions
(DCE_MAX_SESSIONS), which both doors share. Counted per client as the trusted proxy saw it
(`client_key`), or per submitter token when the session opens with one (a token's holder
has a quota of its own, whatever its addresses), in the shared limit store when the
processes count together (else each counts its share). Without a quota (the local profile)
nothing is counted: a session spends only its creation-rate token, when there is a rate."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from dataclean_env.errors import ClientQuotaReached, EnvError
from dataclean_env.rate_limit import RateLimit
from dataclean_env.server.limits.client_limits import Quota, session_quota
from dataclean_env.server.limits.limit_store import Counts
from dataclean_env.server.processes.affinity import Place
from dataclean_env.settings import Settings

TOKEN_HOLDER = "token:"  # the prefix of a token holder's key (an address never has one)


class SessionQuota:
    """One per app: every door that opens a session takes its place here."""

    def __init__(
        self,
        settings: Settings,
        limiter: RateLimit,
        counts: Counts | None = None,
        token_holder: Callable[[str], str] | None = None,
    ):
        self.limiter = limiter
        self.counts = counts or Counts()
        # The whole server's quota when the processes count together, else this one's share.
        whole = session_quota(settings)
        share = (lambda n: n) if self.counts.shared else Place.of(settings).share
        self.quota = Quota(
            *(None if n is None else share(n) for n in (whole.per_client, whole.per_token))
        )
        # A submitter token -> its id (InvalidToken; 503 while the leaderboard's database
        # cannot be read): the tokens are the leaderboard's.
        self.token_holder = token_holder
        self.open: dict[str, int] = {}  # holder -> open sessions (changed only in `counts`)

    async def take_async(self, client: str, token: str | None = None) -> str:
        """`take` from the event loop; `token`: the session's submitter token, if it came
        with one. Returns the key its place is held under, for `release_async`."""
        holder = client
        if token is not None and self.quota.per_client is not None:
            if self.token_holder is None:
                raise RuntimeError("this quota was built without the leaderboard's tokens")
            holder = TOKEN_HOLDER + await asyncio.to_thread(self.token_holder, token)
        await self._run(lambda: self.take(holder, client))
        return holder

    async def release_async(self, holder: str) -> None:
        await self._run(lambda: self.release(holder))

    async def _run(self, work: Callable[[], None]) -> None:
        # A shared store may keep a call waiting: in a thread, not on the event loop.
        await asyncio.to_thread(work) if self.counts.shared else work()

    def limit(self, holder: str) -> int | None:
        return self.quota.of(holder.startswith(TOKEN_HOLDER))

    def take(self, holder: str, client: str | None = None) -> None:
        """Count one more open session of `holder` (`client`, the address, unless a token's),
        or refuse (nothing counted or spent); a session creation, so it spends a token of
        `client`'s creation rate too."""
        client = client or holder
        limit = self.limit(holder)
        if limit is None:
            self.limiter.take(client, "session creations")
            return
        with self.counts.settle("sockets", holder) as others:
            if others.client + self.open.get(holder, 0) >= limit:
                setting = "TOKEN" if holder.startswith(TOKEN_HOLDER) else "CLIENT"
                raise ClientQuotaReached(
                    f"this client has {limit} open sessions (/ws and MCP), its quota "
                    f"(DCE_SESSIONS_PER_{setting}); close one or retry in "
                    f"{ClientQuotaReached.retry_after} s"
                )
            others.rows = {holder: self._count(holder, +1)}
        # After the count (a refused session spends no token), not inside it: the token's
        # transaction must not wait on the count's (one SQLite file has one writer).
        try:
            self.limiter.take(client, "session creations")
        except EnvError:
            self.release(holder)
            raise

    def release(self, holder: str) -> None:
        if self.limit(holder) is None:
            return  # nothing was counted
        counted = False
        with contextlib.suppress(EnvError), self.counts.settle("sockets", holder) as mine:
            mine.rows = {holder: self._count(holder, -1)}
            counted = True
        if not counted:  # the store is down: this process's own count still goes down
            self._count(holder, -1)

    def _count(self, holder: str, change: int) -> int:
        if (count := self.open.get(holder, 0) + change) > 0:
            self.open[holder] = count
        else:
            self.open.pop(holder, None)
        return max(count, 0)
