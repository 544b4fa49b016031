"""How uvicorn serves the app: timeouts and sizes against slow or hostile clients.

uvicorn arms its keep-alive timer only after a response, so a client that opens a
connection and sends its headers one byte at a time (slowloris) holds the connection for
as long as it likes. `header_timeout_protocol` closes a connection whose request headers
are not complete DCE_HEADER_SECONDS after the request began.

`server --workers N` serves the same app with the same options in each process, on a Unix
socket behind HAProxy (`worker_options`, `behind_balancer`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
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


# HAProxy keeps its connections to a process open between requests; clients' idle
# connections are HAProxy's to time out (DCE_KEEP_ALIVE_SECONDS).
BALANCER_KEEP_ALIVE_SECONDS = 600
# What a process calls its Unix-socket peer: only HAProxy can reach the socket (a private
# folder), so the process trusts the X-Forwarded-For HAProxy appends to.
BALANCER_PEER = "dce-balancer"


def worker_options(settings: Settings) -> dict[str, Any]:
    """`uvicorn_options` for a process behind HAProxy (proxy headers: `behind_balancer`)."""
    return {
        **uvicorn_options(settings),
        "timeout_keep_alive": BALANCER_KEEP_ALIVE_SECONDS,
        "proxy_headers": False,
        "log_level": "warning",
        "access_log": False,
    }


def behind_balancer(app: ASGIApp, settings: Settings) -> ASGIApp:
    """`app` as a process behind HAProxy serves it: the client address comes from
    X-Forwarded-For, where HAProxy appended its TCP peer, read with the trusted proxies a
    single process uses."""
    # uvicorn types ASGI more narrowly than Starlette; the protocol is the same.
    trusted: Any = ProxyHeadersMiddleware(
        app,  # type: ignore[arg-type]
        trusted_hosts=f"{settings.forwarded_allow_ips},{BALANCER_PEER}",
    )

    async def from_balancer(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and scope.get("client") is None:
            scope["client"] = (BALANCER_PEER, 0)  # a Unix socket has no address
        await trusted(scope, receive, send)

    return from_balancer
