"""OpenEnv's session server, with sessions that cannot pile up.

OpenEnv keeps a session (an environment and a thread) per /ws connection and per
`POST /mcp {"method": "openenv/session/create"}`. A session made over /mcp has no
connection to end it, so 256 such calls used to fill the pool for good. Here a session that
no socket owns or is attached to ("detached") expires after DCE_DETACHED_SESSION_SECONDS
without use; expired ones are removed before every new session is counted, and by a sweep
in the background. Sessions of live sockets end with their socket (the /ws guard closes
idle ones).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from dataclean_env.openenv_light import skip_package_inits
from dataclean_env.server.guards import LIVE_SOCKET

skip_package_inits()  # see openenv_light

from openenv.core.env_server.http_server import HTTPEnvServer  # noqa: E402

__all__ = ["LIVE_SOCKET", "SessionServer"]


class SessionServer(HTTPEnvServer):
    def __init__(self, *args: Any, detached_seconds: float, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.detached_seconds = detached_seconds
        self._socket_sessions: set[str] = set()
        self._sweeper: asyncio.Task[None] | None = None

    async def _create_session(self) -> tuple[str, Any]:
        await self.expire_detached()
        self._start_sweeper()
        session_id, env = await super()._create_session()
        if LIVE_SOCKET.get():
            self._socket_sessions.add(session_id)
        return session_id, env

    async def _destroy_session(self, session_id: str) -> None:
        self._socket_sessions.discard(session_id)
        await super()._destroy_session(session_id)

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
