"""The front of `server --workers N`: one listening socket, N worker processes behind it.

A small HTTP/1.1 reverse proxy on asyncio (uvloop when installed). Each request is read
(head and body), given to the worker that `affinity` names, and that worker's answer is
relayed back; a client connection keeps one kept-alive Unix-socket connection per worker it
has talked to. A WebSocket upgrade picks the worker with the fewest open sockets and is then
piped byte for byte, so a /ws session stays on its worker. It parses only what routing
needs: request line, headers, Content-Length or chunked bodies.

It is the server's edge, so it does what uvicorn does for a single process: a connection
must send its request headers within DCE_HEADER_SECONDS of their first byte (else 408 and
close: a slowloris client cannot hold it), its body within DCE_BODY_SECONDS (else 408), and
an idle kept-alive connection is closed after DCE_KEEP_ALIVE_SECONDS. Every request it
relays carries the client's address appended to X-Forwarded-For; the workers take the
client from there with the same trusted-proxy rule (DCE_FORWARDED_ALLOW_IPS) that a single
process applies to its TCP peer (`serving.behind_front`), so rate limits and logs see the
client, not the front.

Why not HAProxy in front of `uvicorn --workers`: uvicorn's workers share one socket and the
kernel hands connections out at random, so an episode's next request may reach a process
that does not hold it. HAProxy can route by episode id (the multi-replica layout in
docs/DESIGN.md does), but a Space or a plain `pip install` has no HAProxy; this front needs
nothing beyond Python.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from dataclean_env.server.affinity import episode_id_of, routing_key, worker_for

log = logging.getLogger(__name__)

MAX_HEAD = 65536
MAX_BODY = 16 * 1024 * 1024


class BadRequest(Exception):
    def __init__(self, reason: str, status: bytes = b"400 Bad Request"):
        super().__init__(reason)
        self.status = status


TOO_LARGE = b"413 Content Too Large"
TIMEOUT = b"408 Request Timeout"
FORWARDED_FOR = b"x-forwarded-for"


@dataclass(frozen=True)
class Limits:
    """The front's timeouts (seconds); `from_settings` reads the DCE_ settings."""

    header_seconds: float = 10.0
    body_seconds: float = 30.0
    keep_alive_seconds: float = 5.0

    @classmethod
    def from_settings(cls) -> Limits:
        from dataclean_env.settings import get_settings

        settings = get_settings()
        return cls(settings.header_seconds, settings.body_seconds, settings.keep_alive_seconds)


def _refusal(status: bytes) -> bytes:
    return b"HTTP/1.1 " + status + b"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


def _parse_head(head: bytes) -> tuple[bytes, dict[bytes, bytes]]:
    """First line and lower-cased headers (the last value of a repeated header wins, but
    repeated X-Forwarded-For values are joined, as proxies read them)."""
    lines = head.split(b"\r\n")
    headers: dict[bytes, bytes] = {}
    for line in lines[1:]:
        if line:
            name, sep, value = line.partition(b":")
            if not sep:
                raise BadRequest("malformed header")
            name = name.strip().lower()
            if name == FORWARDED_FOR and name in headers:
                headers[name] += b", " + value.strip()
            else:
                headers[name] = value.strip()
    return lines[0], headers


def forward_for(headers: dict[bytes, bytes], peer: bytes) -> None:
    """Append the front's TCP peer to X-Forwarded-For, as every proxy does."""
    earlier = headers.get(FORWARDED_FOR)
    headers[FORWARDED_FOR] = earlier + b", " + peer if earlier else peer


async def _read_body(reader: asyncio.StreamReader, headers: dict[bytes, bytes]) -> bytes | None:
    """The body by Content-Length or chunked coding; None when the message has neither."""
    if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
        chunks: list[bytes] = []
        size_total = 0
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                    pass
                return b"".join(chunks)
            size_total += size
            if size_total > MAX_BODY:
                raise BadRequest("body too large", TOO_LARGE)
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
    length = headers.get(b"content-length")
    if length is None:
        return None
    if not length.isdigit():
        raise BadRequest("bad content-length")
    if int(length) > MAX_BODY:
        raise BadRequest("body too large", TOO_LARGE)
    return await reader.readexactly(int(length))


def _head(first: bytes, headers: dict[bytes, bytes]) -> bytes:
    return b"\r\n".join([first, *(name + b": " + value for name, value in headers.items())]) + (
        b"\r\n\r\n"
    )


def _rebuild(first: bytes, headers: dict[bytes, bytes], body: bytes) -> bytes:
    """The message again, with the body as Content-Length (chunked coding removed)."""
    lines = [first]
    for name, value in headers.items():
        if name not in (b"content-length", b"transfer-encoding"):
            lines.append(name + b": " + value)
    lines.append(b"content-length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class Upstream:
    """One kept-alive connection to a worker's Unix socket."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, path: str) -> Upstream:
        reader, writer = await asyncio.open_unix_connection(path, limit=MAX_HEAD * 4)
        return cls(reader, writer)

    async def exchange(self, request: bytes, method: bytes) -> tuple[bytes, bool]:
        """Send a request; the whole response and whether this connection stays usable."""
        self.writer.write(request)
        while True:  # interim answers (100 Continue) are not relayed: the front sent its own
            head = await self.reader.readuntil(b"\r\n\r\n")
            status_line, headers = _parse_head(head[:-4])
            status = int(status_line.split(b" ", 2)[1])
            if not 100 <= status < 200 or status == 101:
                break
        keep = b"close" not in headers.get(b"connection", b"").lower()
        if method == b"HEAD" or status in (101, 204, 304):
            return head, keep
        body = await _read_body(self.reader, headers)
        if body is None:  # no length: the body runs to the end of the connection
            body = await self.reader.read()
            keep = False
        if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
            return _rebuild(status_line, headers, body), keep
        return head + body, keep

    def close(self) -> None:
        self.writer.close()


class Front:
    def __init__(self, sockets: list[str], limits: Limits | None = None):
        self.sockets = sockets
        self.limits = limits or Limits()
        self.open_ws = [0] * len(sockets)

    async def _read_head(self, reader: asyncio.StreamReader, first: bool) -> bytes | None:
        """The next request's head; None when the client closed or idled out (closed
        silently, as uvicorn does); BadRequest(408) when its headers come too slowly."""
        loop = asyncio.get_running_loop()
        limits = self.limits
        # The first request of a connection has `header_seconds` to begin, later ones the
        # keep-alive time; once a request has begun, its headers must be complete in time.
        wait = limits.header_seconds if first else limits.keep_alive_seconds
        try:
            async with asyncio.timeout(wait):
                start = await reader.readexactly(1)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            return None
        try:
            async with asyncio.timeout_at(loop.time() + limits.header_seconds):
                return start + await reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            raise BadRequest("request headers too slow", TIMEOUT) from None

    async def _read_body_in_time(
        self, reader: asyncio.StreamReader, headers: dict[bytes, bytes]
    ) -> bytes | None:
        try:
            async with asyncio.timeout(self.limits.body_seconds):
                return await _read_body(reader, headers)
        except TimeoutError:
            raise BadRequest("request body too slow", TIMEOUT) from None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstreams: dict[int, Upstream] = {}
        peername = writer.get_extra_info("peername")
        peer = str(peername[0] if isinstance(peername, tuple) else "unknown").encode()
        first_request = True
        try:
            while True:
                try:
                    head = await self._read_head(reader, first_request)
                    if head is None:
                        return
                    first_request = False
                    first, headers = _parse_head(head[:-4])
                    method, target, _ = first.split(b" ", 2)
                    forward_for(headers, peer)
                    if b"websocket" in headers.get(b"upgrade", b"").lower():
                        await self._pipe_websocket(_head(first, headers), reader, writer)
                        return
                    if headers.pop(b"expect", b"").lower() == b"100-continue":
                        # curl asks before sending a body over 1 KiB: answer for the worker
                        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    body = await self._read_body_in_time(reader, headers) or b""
                except asyncio.LimitOverrunError:
                    writer.write(_refusal(b"431 Request Header Fields Too Large"))
                    return
                except (BadRequest, ValueError) as exc:
                    writer.write(
                        _refusal(exc.status if isinstance(exc, BadRequest) else b"400 Bad Request")
                    )
                    return
                _, _, query = target.partition(b"?")
                key = routing_key(episode_id_of(query, headers, body))
                index = worker_for(key, len(self.sockets))
                request = (
                    _head(first, headers) + body
                    if b"transfer-encoding" not in headers
                    else _rebuild(first, headers, body)
                )
                response = await self._exchange(upstreams, index, request, method)
                writer.write(response)
                await writer.drain()
                if b"close" in headers.get(b"connection", b"").lower():
                    return
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            log.debug("front connection ended: %s", exc)
        finally:
            for upstream in upstreams.values():
                upstream.close()
            with contextlib.suppress(Exception):
                writer.close()

    async def _exchange(
        self, upstreams: dict[int, Upstream], index: int, request: bytes, method: bytes
    ) -> bytes:
        for attempt in (0, 1):  # a kept-alive upstream the worker closed: reconnect once
            upstream = upstreams.get(index)
            if upstream is None:
                upstream = upstreams[index] = await Upstream.open(self.sockets[index])
            try:
                response, keep = await upstream.exchange(request, method)
            except (ConnectionError, asyncio.IncompleteReadError):
                upstreams.pop(index).close()
                if attempt:
                    raise
                continue
            if not keep:
                upstreams.pop(index).close()
            return response
        raise AssertionError("unreachable")

    async def _pipe_websocket(
        self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        index = min(range(len(self.sockets)), key=lambda i: self.open_ws[i])
        self.open_ws[index] += 1
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(self.sockets[index])
            up_writer.write(head)

            async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
                try:
                    while data := await src.read(65536):
                        dst.write(data)
                        await dst.drain()
                finally:
                    with contextlib.suppress(Exception):
                        dst.write_eof()

            await asyncio.gather(
                pump(reader, up_writer), pump(up_reader, writer), return_exceptions=True
            )
            up_writer.close()
        finally:
            self.open_ws[index] -= 1


async def serve(
    host: str,
    port: int,
    sockets: list[str],
    ready: asyncio.Event | None = None,
    limits: Limits | None = None,
) -> None:
    front = Front(sockets, limits or Limits.from_settings())
    server = await asyncio.start_server(front.handle, host, port, limit=MAX_HEAD, backlog=2048)
    if ready is not None:
        ready.set()
    async with server:
        await server.serve_forever()
