"""How uvicorn serves the app: timeouts and sizes against slow or hostile clients.

uvicorn arms its keep-alive timer only after a response, so a client that opens a
connection and sends its headers one byte at a time (slowloris) holds the connection for
as long as it likes; and httptools buffers headers of any size (50 MB of one header took
the server 80 MB up), trailers after a chunked body too (5 GB in 15 s). `guarded_protocol`
closes a connection whose request headers are not complete DCE_HEADER_SECONDS after the
request began, answers 431 HEADERS_TOO_LARGE to one whose headers pass 64 KiB, and closes
one whose trailers do, or whose body is not complete a second after DCE_BODY_SECONDS (the
app answers 408 to a body it reads; a GET's body nobody reads held its connection forever).

`server --workers N` serves the same app with the same options in each process, on a Unix
socket behind HAProxy (`worker_options`, `behind_balancer`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from dataclean_env.settings import Settings

MAX_HEADER_BYTES = 64 * 1024  # a request line and headers; past it: 431, and closed
_HEADERS_TOO_LARGE = json.dumps(
    {
        "detail": f"the request line and headers exceed {MAX_HEADER_BYTES} bytes",
        "code": "HEADERS_TOO_LARGE",
    }
).encode()


# The app answers a body that arrives too slowly 408 at DCE_BODY_SECONDS; the connection
# of a body no one reads (a GET's) is closed this long after that.
BODY_GRACE_SECONDS = 1.0


def guarded_protocol(
    seconds: float, body_seconds: float, max_header_bytes: int
) -> type[HttpToolsProtocol]:
    """httptools' protocol with the request's headers (and trailers) bounded in time and
    size, and its body in time."""

    class GuardedProtocol(HttpToolsProtocol):
        _header_timer: asyncio.TimerHandle | None = None
        _body_timer: asyncio.TimerHandle | None = None
        # The head (request line and headers) is measured before httptools reads it: the
        # parser dispatches a request to the app as soon as its head is complete, so a
        # size checked after parsing came too late for a head that arrived in one read.
        _in_head = True  # the parser waits for a request line or headers
        _head_bytes = 0
        _head_tail = b""  # the head's last 3 bytes: its end may straddle two reads
        _refused = False
        # Bytes since the head, and of the body: the rest are chunk framing and trailers,
        # which httptools and uvicorn keep in memory.
        _request_bytes = 0
        _body_bytes = 0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            while data and self._in_head and not self._refused:
                end = (self._head_tail + data).find(b"\r\n\r\n")
                # Through the head's end in this read, or all of it.
                taken = len(data) if end < 0 else end + 4 - len(self._head_tail)
                self._head_bytes += taken
                if self._head_bytes > max_header_bytes:
                    self._refuse_head()
                    break
                self._head_tail = (self._head_tail + data[:taken])[-3:]
                self._feed(data[:taken])
                data = data[taken:]
            if data and not self._refused:
                # A body. (Only the parser knows where it ends: the head of a request
                # pipelined behind it in this same read goes uncounted.)
                self._request_bytes += len(data)
                self._feed(data)
                # Framing may match the body's size (many small chunks); trailers past that
                # and the header limit close the connection.
                if (
                    not self._in_head
                    and self._request_bytes - 2 * self._body_bytes > max_header_bytes
                ):
                    self._close()

        def _feed(self, data: bytes) -> None:
            # Not once uvicorn has refused the request (400) or upgraded the connection.
            if not self.transport.is_closing() and self.transport.get_protocol() is self:
                super().data_received(data)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()

        def on_body(self, body: bytes) -> None:
            self._body_bytes += len(body)
            super().on_body(body)

        def on_headers_complete(self) -> None:
            self._disarm()
            self._in_head = False
            self._request_bytes = self._body_bytes = 0
            # (A WebSocket handshake has no body: its request completes at once, and the
            # timer ends before the connection is upgraded.)
            self._body_timer = self.loop.call_later(
                body_seconds + BODY_GRACE_SECONDS, self._body_too_slow
            )
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._end_body_timer()
            self._in_head, self._head_bytes, self._head_tail = True, 0, b""
            super().on_message_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._end_body_timer()
            super().connection_lost(exc)

        def _end_body_timer(self) -> None:
            if self._body_timer is not None:
                self._body_timer.cancel()
                self._body_timer = None

        def _body_too_slow(self) -> None:
            self._body_timer = None
            self._close()

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(seconds, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            self._close()

        def _close(self) -> None:
            if not self.transport.is_closing():
                self.transport.close()

        def _refuse_head(self) -> None:
            """431, before httptools has the head (the app never sees the request); after
            the answer to the request before it, if that is still being written."""
            self._refused = True
            if self.cycle is None or self.cycle.response_complete:
                self._answer_too_large()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self._refused:
                self._answer_too_large()

        def _answer_too_large(self) -> None:
            if self.transport.is_closing():
                return
            self.transport.write(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                b"content-type: application/json\r\nconnection: close\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(_HEADERS_TOO_LARGE), _HEADERS_TOO_LARGE)
            )
            # Closed at once, the socket would reset on the unread rest of the request and
            # the client could lose the answer: the rest is read and dropped until the
            # client closes, or the header timeout does.
            if self.transport.can_write_eof():
                self.transport.write_eof()
                self._arm()
            else:
                self.transport.close()

    return GuardedProtocol


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.run` / `uvicorn.Config` besides app, host and port."""
    return {
        "http": guarded_protocol(settings.header_seconds, settings.body_seconds, MAX_HEADER_BYTES),
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
