"""POST/GET/DELETE /mcp for MCP clients: FastMCP's streamable HTTP transport, one episode each.

The protocol (the `initialize` handshake, `tools/list`, `tools/call`, sessions by the
`Mcp-Session-Id` header) is FastMCP's: one app-wide FastMCP server whose only tool source is
`EpisodeTools`, a FastMCP provider that answers with the tools of the calling session's own
`McpEpisode` (see mcp_episode). A session's episode is an OpenEnv session of the same
`SessionServer` /ws uses, so the same limits hold: `max_sessions`, the creation rate per client
(an `initialize` counts as a session creation), and expiry after
`detached_session_seconds` without a call. A body Python's JSON reader cannot read (nesting
past the recursion limit, an integer of over 4300 digits, bad UTF-8) gets the transport's
own parse error (400, PARSE_ERROR): the transport catches only malformed JSON, and would
answer 500. Text that is not valid Unicode (a lone surrogate) is refused with 422
INVALID_TEXT, as on OpenEnv's JSON-RPC route; a number no double holds (1e999) or a NaN or
Infinity literal with 422 INVALID_JSON (the SDK would pass it on as null).

OpenEnv's own JSON-RPC on POST /mcp (`openenv/session/create` and its clients) stays: a request
goes to the MCP transport when it carries `Mcp-Session-Id` or accepts `text/event-stream`, as
the streamable HTTP transport requires of every client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dataclean_env.errors import EnvError, InvalidJson, InvalidText
from dataclean_env.rate_limit import client_key
from dataclean_env.server.http.guards import replay, session_token, unreadable, whole_body
from dataclean_env.server.http.http_errors import env_error_response
from dataclean_env.server.http.requests import INVALID_TEXT, has_invalid_text
from dataclean_env.server.limits.session_quota import SessionQuota

MCP_PATH = "/mcp"


def is_mcp_transport(scope: Scope) -> bool:
    if scope["type"] != "http" or scope["path"] != MCP_PATH:
        return False
    headers = dict(scope["headers"])
    return b"mcp-session-id" in headers or b"text/event-stream" in headers.get(b"accept", b"")


class McpTransport:
    """ASGI middleware: MCP transport requests to the gateway, the rest to `app`."""

    def __init__(self, app: ASGIApp, gateway: McpGateway):
        self.app, self.gateway = app, gateway

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if is_mcp_transport(scope):
            await self.gateway(scope, receive, send)
        else:
            await self.app(scope, receive, send)


class McpGateway:
    """FastMCP's streamable HTTP app, built on the first MCP request.

    The app needs its lifespan (the session manager's task group) running: it runs in a task
    of its own from the first MCP request until `aclose` at shutdown."""

    def __init__(self, mount: Any, quota: SessionQuota):
        self.mount, self.quota = mount, quota
        self._http_app: Any = None
        self.sessions: Any = None  # mcp_episode.EpisodeSessions, once started
        self._started: asyncio.Event | None = None
        self._stop = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope["headers"])
        opening = scope["method"] == "POST" and b"mcp-session-id" not in headers
        if scope["method"] == "POST":
            body = await whole_body(receive)
            refusal = _refusal(body)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
            receive = replay(body, receive)
        await self._ensure_started()
        if scope["method"] == "DELETE" and b"mcp-session-id" in headers:
            # Ended before the answer: once a client has it, nothing of the session is held.
            await self.sessions.end(headers[b"mcp-session-id"].decode("latin-1"))
        if not opening:
            await self._http_app(scope, receive, send)
            return
        client = client_key(scope)
        try:  # a new MCP session: within the client's quota and the creation rate
            holder = await self.quota.take_async(client, session_token(Headers(scope=scope)))
        except EnvError as error:
            await env_error_response(error)(scope, receive, send)
            return
        opened: list[str] = []
        try:
            await self._http_app(scope, receive, self._opened(send, holder, opened))
        finally:
            if not opened:  # no session came of it: its place is free again
                await self.quota.release_async(holder)

    def _opened(self, send: Send, holder: str, opened: list[str]) -> Send:
        """`send`, telling the sessions of the MCP session an initialize establishes (and
        whose quota place, `holder`'s, it holds)."""

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                found = dict(message.get("headers") or []).get(b"mcp-session-id")
                if found is not None:
                    opened.append(found.decode("latin-1"))
                    self.sessions.opened(opened[0], holder)
            await send(message)

        return watched

    async def _ensure_started(self) -> None:
        if self._started is None:
            self._started = asyncio.Event()
            await self.mount.ensure()
            # Imported here: FastMCP's server takes a while to import, and only /mcp needs it.
            from dataclean_env.server.openenv.mcp_episode import EpisodeSessions, tool_server

            self.sessions = EpisodeSessions(self.mount.server, self.quota)
            self._http_app = tool_server(self.sessions).http_app(path=MCP_PATH)
            self._runner = asyncio.create_task(self._run())
        await self._started.wait()

    async def _run(self) -> None:
        assert self._started is not None
        from dataclean_env.server.openenv.mcp_episode import watch_session_ends

        async with self._http_app.router.lifespan_context(self._http_app):
            idle = self.mount.settings.detached_session_seconds
            watch_session_ends(self._http_app, self.sessions, idle)
            self._started.set()
            await self._stop.wait()

    async def aclose(self) -> None:
        if self._runner is not None:
            self._stop.set()
            with contextlib.suppress(Exception):
                await self._runner


class _NonFinite(Exception):
    """A number no double holds (1e999) or a NaN/Infinity literal."""


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _NonFinite(text)
    return number


def _no_constant(text: str) -> float:
    raise _NonFinite(text)


def _refusal(body: bytes) -> Response | None:
    """The answer to a body the transport would fail on or misread, or None to hand it on."""
    try:
        data = json.loads(body, parse_float=_finite, parse_constant=_no_constant)
    except _NonFinite as exc:
        # The MCP SDK writes the parsed arguments back as JSON, a non-finite number as
        # null: a seed of 1e999 would become no seed. REST refuses it too.
        return env_error_response(
            InvalidJson(f"{exc} is not a finite number; write numbers a double holds")
        )
    except (ValueError, RecursionError) as exc:
        why = unreadable(exc)
        return None if why is None else _parse_error(why)
    if has_invalid_text(body, data):  # a lone surrogate could never be written back
        return env_error_response(InvalidText(INVALID_TEXT))
    return None


def _parse_error(why: str) -> JSONResponse:
    """The transport's answer to a body it cannot parse (`StreamableHTTPServerTransport`)."""
    error = {"code": -32700, "message": f"Parse error: the body cannot be read: {why}"}
    return JSONResponse({"jsonrpc": "2.0", "id": "server-error", "error": error}, 400)
