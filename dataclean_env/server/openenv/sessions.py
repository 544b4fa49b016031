"""OpenEnv's session server, with sessions that cannot pile up.

OpenEnv keeps a session (an environment and a thread) per /ws connection and per
`POST /mcp {"method": "openenv/session/create"}`. A session made over /mcp has no
connection to end it, so 256 such calls used to fill the pool for good. Here a session that
no socket owns or is attached to ("detached") expires after DCE_DETACHED_SESSION_SECONDS
without use; expired ones are removed before every new session is counted, and by a sweep
in the background. Sessions of live sockets end with their socket (the /ws guard closes
idle ones).

`max_sessions` is the whole server's: each new session settles with the shared limit store
(`limit_store`: the sessions the other processes hold count too) and each end publishes this
process's number again; past it, OpenEnv's SessionCapacityError (the CAPACITY_REACHED frame
on /ws, a JSON-RPC error on /mcp). A store that cannot be reached refuses the same way, with
its own message.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any, TypeVar

from dataclean_env.errors import LimitsUnavailable
from dataclean_env.openenv_light import skip_package_inits
from dataclean_env.server.http.guards import LIVE_SOCKET
from dataclean_env.server.limits.limit_store import TOTAL, Counts

skip_package_inits()  # see openenv_light

from openenv.core.env_server.exceptions import SessionCapacityError  # noqa: E402
from openenv.core.env_server.http_server import HTTPEnvServer  # noqa: E402

__all__ = ["LIVE_SOCKET", "SessionServer"]
T = TypeVar("T")


async def off_loop(counts: Counts, work: Callable[[], T]) -> T:
    """`work` (which settles `counts`) in a thread when it may wait on the shared store."""
    return await asyncio.to_thread(work) if counts.shared else work()


class SessionServer(HTTPEnvServer):
    def __init__(
        self,
        *args: Any,
        detached_seconds: float,
        max_sessions: int,
        counts: Counts | None = None,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.detached_seconds = detached_seconds
        self.max_sessions = max_sessions
        self.counts = counts or Counts()
        self._admitted = 0  # sessions let in and still being made
        self._counted: set[str] = set()  # sessions made (ended ones leave at the next count)
        self._socket_sessions: set[str] = set()
        # Called with a session's id as it ends, before anything is awaited (/mcp's
        # episodes go with their OpenEnv session: mcp_episode.EpisodeSessions).
        self.on_end: list[Callable[[str], None]] = []
        self._sweeper: asyncio.Task[None] | None = None

    async def _create_session(self) -> tuple[str, Any]:
        await self.expire_detached()
        self._start_sweeper()
        await off_loop(self.counts, self._admit)
        try:
            session_id, env = await super()._create_session()
        except BaseException:
            self._admitted -= 1
            if self.counts.shared:
                await off_loop(self.counts, self._publish)
            raise
        self._admitted -= 1  # and counted as made, with no await between: counted once
        self._counted.add(session_id)
        if LIVE_SOCKET.get():
            self._socket_sessions.add(session_id)
        return session_id, env

    def _admit(self) -> None:
        """Count one more session, or raise SessionCapacityError (nothing counted)."""
        try:
            with self.counts.settle("sessions") as others:
                held = self._held()
                if others.total + held >= self.max_sessions:
                    raise SessionCapacityError(others.total + held, self.max_sessions)
                self._admitted += 1
                others.rows = {TOTAL: held + 1}
        except LimitsUnavailable as error:
            raise SessionCapacityError(
                len(self._sessions), self.max_sessions, error.detail
            ) from error

    def _publish(self) -> None:
        with contextlib.suppress(LimitsUnavailable), self.counts.settle("sessions") as mine:
            # Absolute: a failed publication is corrected by the next one.
            mine.rows = {TOTAL: self._held()}

    def _held(self) -> int:
        # /mcp close pops sessions directly, without _destroy_session: they leave here.
        self._counted &= self._sessions.copy().keys()  # a copy: the loop may be adding one
        return len(self._counted) + self._admitted

    async def _destroy_session(self, session_id: str) -> None:
        for ended in self.on_end:
            ended(session_id)
        self._socket_sessions.discard(session_id)
        await super()._destroy_session(session_id)
        if self.counts.shared:
            await off_loop(self.counts, self._publish)

    def detached_expired(self, now: float | None = None) -> list[str]:
        now = time.time() if now is None else now  # OpenEnv's activity times are time.time()
        self._socket_sessions &= set(self._sessions)  # /mcp close pops sessions directly
        return [
            session_id
            for session_id, info in list(self._session_info.items())
            if session_id not in self._socket_sessions
            and session_id not in self._session_websocket_attachments
            and now - info.last_activity_at > self.detached_seconds
        ]

    async def expire_detached(self) -> int:
        expired = self.detached_expired()
        for session_id in expired:
            await self._destroy_session(session_id)
        return len(expired)

    def _start_sweeper(self) -> None:
        # Started on the first session (tests and servers may run without lifespan events);
        # it frees the threads of expired sessions even when nobody creates new ones.
        loop = asyncio.get_running_loop()
        if self._sweeper is not None and not self._sweeper.done():
            if self._sweeper.get_loop() is loop:
                return
            self._sweeper.cancel()
        self._sweeper = loop.create_task(self._sweep())

    async def _sweep(self) -> None:
        interval = max(1.0, min(30.0, self.detached_seconds / 4))
        while True:
            await asyncio.sleep(interval)
            with contextlib.suppress(Exception):  # a failed sweep is retried next time
                await self.expire_detached()
