"""How uvicorn serves the app: timeouts and sizes against slow or hostile clients.

uvicorn arms its keep-alive timer only after a response, so a client that opens a
connection and sends its headers one byte at a time (slowloris) holds the connection for
as long as it likes. `header_timeout_protocol` closes a connection whose request headers
are not complete DCE_HEADER_SECONDS after the request began.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from dataclean_env.settings import Settings


def header_timeout_protocol(seconds: float) -> type[HttpToolsProtocol]:
    class HeaderTimeoutProtocol(HttpToolsProtocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(seconds, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                self.transport.close()

    return HeaderTimeoutProtocol


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.run` / `uvicorn.Config` besides app, host and port."""
    return {
        "http": header_timeout_protocol(settings.header_seconds),
        "timeout_keep_alive": settings.keep_alive_seconds,
        "ws_max_size": settings.max_body_bytes,
        "ws_per_message_deflate": settings.ws_compression,
        "ws_ping_interval": settings.ws_ping_seconds,
        "ws_ping_timeout": settings.ws_ping_seconds,
        "proxy_headers": True,
        "access_log": settings.access_log,
        "forwarded_allow_ips": settings.forwarded_allow_ips,
    }
