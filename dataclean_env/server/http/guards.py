"""The server's edge: what every request and every WebSocket frame passes before any route.

* `HttpGuard` (ASGI middleware, every HTTP route, OpenEnv's included): refuses foreign
  browser origins on state-changing requests (403), bodies that are not JSON by their
  content type (415), bodies over DCE_MAX_BODY_BYTES (413) or sent too slowly (408). It
  reads the body once and hands it on, so one limit covers every route.
* `guard_openenv_posts`: OpenEnv's own POST routes (/mcp, /data-cleaning-openenv/*) refuse
  text that is not valid Unicode (422), rate-limit `openenv/session/create` (429), and
  answer a JSON-RPC `session_id` that is not text with INVALID_PARAMS.
* `WebSocketGuard` (around /ws): rate-limits connects, answers binary, non-object,
  unreadable (too deep, 4300-digit integers) or invalid-Unicode frames with an error frame
  (the session goes on), and closes a connection that sent nothing for DCE_WS_IDLE_SECONDS.
* OpenEnv's WebSocket /mcp is refused: its sessions' environment serves no MCP method (the
  tools are FastMCP's, on POST /mcp), so such a socket would only hold a session.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dataclean_env.errors import (
    BodyTooLarge,
    EnvError,
    HostNotAllowed,
    InvalidAction,
    InvalidText,
    OriginNotAllowed,
    RequestTimeout,
    UnsupportedMediaType,
)
from dataclean_env.leaderboard import tokens
from dataclean_env.rate_limit import CALLER, Buckets, RateLimit, client_key
from dataclean_env.server.http.http_errors import env_error_response
from dataclean_env.server.http.requests import INVALID_TEXT, has_invalid_text, parse_json
from dataclean_env.server.limits.client_limits import creation_rate
from dataclean_env.server.limits.session_quota import SessionQuota
from dataclean_env.settings import Settings

# Set by the /ws guard while a socket's handler runs: sessions it creates belong to a socket
# (sessions.SessionServer). Here, not in sessions.py, which imports OpenEnv's server.
LIVE_SOCKET: ContextVar[bool] = ContextVar("dce_live_socket", default=False)
# The socket's typed errors waiting for their frame (`keep_code`); None: not in a socket.
# OpenEnv frames any exception of a reset as EXECUTION_ERROR: the frame gets the typed
# error's own code instead, the one REST answers with for the same input.
FRAMED: ContextVar[list[EnvError] | None] = ContextVar("dce_framed", default=None)
# The start of OpenEnv's error frames (`WSErrorResponse.model_dump_json()`).
ERROR_FRAME = '{"type":"error"'


def keep_code(error: EnvError) -> None:
    """Let the error frame OpenEnv is about to send for `error` carry its code."""
    framed = FRAMED.get()
    if framed is not None:
        framed.append(error)


def _envelope_refusal(message: Message) -> Message:
    """OpenEnv's VALIDATION_ERROR frame for a step that is no action envelope, with the code
    and detail REST answers for that body (INVALID_ACTION: `CleaningAction._envelope`)."""
    text = message.get("text") or ""
    if not text.startswith(ERROR_FRAME):  # an observation: left unread
        return message
    try:
        data = json.loads(text).get("data")
    except (ValueError, AttributeError):
        return message
    if not isinstance(data, dict) or data.get("code") != "VALIDATION_ERROR":
        return message
    for problem in data.get("errors") or ():
        if isinstance(problem, dict) and problem.get("type") == "invalid_action":
            detail = str((problem.get("ctx") or {}).get("detail", data.get("message")))
            return {**message, "text": _error_frame(detail, InvalidAction.code)}
    return message


def _with_code(message: Message, framed: list[EnvError]) -> Message:
    """OpenEnv's error frame for the last kept error, with that error's code."""
    error = framed.pop()
    try:
        frame = json.loads(message.get("text") or "")
    except ValueError:
        return message
    data = frame.get("data") if isinstance(frame, dict) else None
    if (
        isinstance(data, dict)
        and frame.get("type") == "error"
        and data.get("message") == error.detail
    ):
        return {**message, "text": _error_frame(error.detail, error.code)}
    return message


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def allowed_origins(settings: Settings) -> list[str]:
    return [o.strip().rstrip("/") for o in settings.cors_origins.split(",") if o.strip()]


LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})


def allowed_hosts(settings: Settings) -> frozenset[str]:
    """DCE_ALLOWED_HOSTS as lower-case names (empty: any Host is served)."""
    names = {h.strip().lower() for h in settings.allowed_hosts.split(",") if h.strip()}
    return frozenset(names | LOOPBACK_HOSTS) if names else frozenset()


def check_host(headers: Headers, allowed: frozenset[str]) -> None:
    """HostNotAllowed unless the request's Host (without its port) is in `allowed`."""
    if not allowed:
        return
    host = headers.get("host", "").strip().lower()
    name = host if host.endswith("]") else host.rsplit(":", 1)[0]
    if name not in allowed:
        raise HostNotAllowed(f"this server does not answer for host {host[:64]!r}")


def origin_allowed(origin: str, headers: Headers, allowed: list[str]) -> bool:
    """Same origin as the request's Host, or listed in DCE_CORS_ORIGINS ("*": any)."""
    if "*" in allowed or origin.rstrip("/") in allowed:
        return True
    return origin != "null" and urlsplit(origin).netloc == headers.get("host", "")


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


async def _send_error(scope: Scope, receive: Receive, send: Send, exc: EnvError) -> None:
    await env_error_response(exc)(scope, receive, send)


def unreadable(exc: ValueError | RecursionError) -> str | None:
    """Why `json.loads` failed, when a reader that catches only JSONDecodeError (OpenEnv's,
    the MCP SDK's) would fail with it unanswered; None for a JSONDecodeError, which such
    readers answer themselves."""
    if isinstance(exc, json.JSONDecodeError):
        return None
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8"
    return "it holds an integer of more than 4300 digits"  # Python's limit on int("...")


def replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class HttpGuard:
    def __init__(self, app: ASGIApp, settings: Settings):
        self.app = app
        self.max_bytes = settings.max_body_bytes
        self.body_seconds = settings.body_seconds
        self.origins = allowed_origins(settings)
        self.hosts = allowed_hosts(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            body = await self._check(scope, receive)
        except EnvError as exc:
            await _send_error(scope, receive, send, exc)
            return
        caller = CALLER.set(client_key(scope))
        try:
            await self.app(scope, receive if body is None else replay(body, receive), send)
        finally:
            CALLER.reset(caller)

    async def _check(self, scope: Scope, receive: Receive) -> bytes | None:
        """The request's body (None: left unread), or an EnvError refusing the request."""
        headers = Headers(scope=scope)
        check_host(headers, self.hosts)
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            raise BodyTooLarge(f"request body is larger than {self.max_bytes} bytes")
        if scope["method"] in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is not None and not origin_allowed(origin, headers, self.origins):
            # A browser page of another site (CSRF): no state change on a visitor's behalf.
            raise OriginNotAllowed(
                "requests from this browser origin are not allowed (DCE_CORS_ORIGINS)"
            )
        try:
            async with asyncio.timeout(self.body_seconds):
                body = await self._read(receive)
        except TimeoutError:
            raise RequestTimeout(
                f"the request body was not received within {self.body_seconds:g} s"
            ) from None
        content_type = headers.get("content-type")
        if body.strip() and content_type is not None and not _is_json(content_type):
            # text/plain, forms: what a cross-site page can send without a CORS preflight.
            raise UnsupportedMediaType(
                f"bodies must be JSON (content-type application/json), not {content_type[:64]!r}"
            )
        return body

    async def _read(self, receive: Receive) -> bytes:
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            body.extend(message.get("body", b""))
            if len(body) > self.max_bytes:
                raise BodyTooLarge(f"request body is larger than {self.max_bytes} bytes")
            if not message.get("more_body", False):
                break
        return bytes(body)


# ── OpenEnv's HTTP routes ──────────────────────────────────────────────────


def guard_openenv_posts(routes: list[Any], ours: set[int], limiter: RateLimit) -> None:
    """Wrap OpenEnv's POST routes (those whose id is not in `ours`) with the text and rate
    checks."""
    for route in routes:
        if isinstance(route, Route) and id(route) not in ours and "POST" in (route.methods or ()):
            route.app = _openenv_post(route.app, limiter)


def _untyped_session(data: Any) -> dict[str, Any] | None:
    """The JSON-RPC error for a request whose `session_id` is not text (OpenEnv looks it up
    in a dict: a list or an object would raise), else None."""
    params = data.get("params") if isinstance(data, dict) else None
    if not isinstance(params, dict) or isinstance(params.get("session_id", ""), str):
        return None
    request_id = data.get("id")
    known_id = isinstance(request_id, str | int) and not isinstance(request_id, bool)
    return {
        "jsonrpc": "2.0",
        "id": request_id if known_id else None,
        "error": {"code": -32602, "message": "Invalid params - 'session_id' must be text"},
    }


def _openenv_post(app: ASGIApp, limiter: RateLimit) -> ASGIApp:
    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        body = await whole_body(receive)
        try:
            data = parse_json(body) if body.strip() else None
        except InvalidText as exc:
            await _send_error(scope, receive, send, exc)
            return
        except EnvError:
            data = None  # not JSON: OpenEnv answers its own parse error
        try:
            if isinstance(data, dict) and data.get("method") == "openenv/session/create":
                await limiter.take_async(client_key(scope), "session creations")
        except EnvError as exc:
            await _send_error(scope, receive, send, exc)
            return
        refusal = _untyped_session(data)
        if refusal is not None:  # JSON-RPC errors are answered with 200, as OpenEnv's are
            await JSONResponse(refusal)(scope, receive, send)
            return
        await app(scope, replay(body, receive), send)

    return guarded


async def whole_body(receive: Receive) -> bytes:
    # HttpGuard has already bounded and buffered it: this is one message.
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if message["type"] == "http.disconnect" or not message.get("more_body", False):
            return b"".join(chunks)


# ── /ws ──────────────────────────────────────────────────────────────────────


def _error_frame(message: str, code: str) -> str:
    return json.dumps({"type": "error", "data": {"message": message, "code": code}})


def frame_problem(message: Message) -> str | None:
    """The error frame to answer a client frame with, or None if OpenEnv may read it."""
    text = message.get("text")
    if text is None:
        return _error_frame("binary frames are not accepted; send JSON text", "INVALID_JSON")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        why = unreadable(exc)
        if why is None:
            return None  # not JSON: OpenEnv answers INVALID_JSON itself
        return _error_frame(f"the frame cannot be read: {why}", "INVALID_JSON")
    if not isinstance(data, dict):
        return _error_frame("a frame must be a JSON object with a 'type'", "INVALID_JSON")
    if has_invalid_text(text.encode("utf-8", "surrogatepass"), data):
        return _error_frame(INVALID_TEXT, InvalidText.code)  # as REST answers it
    return None


class WebSocketGuard:
    def __init__(self, app: ASGIApp, settings: Settings, quota: SessionQuota):
        self.app = app
        self.idle_seconds = settings.ws_idle_seconds
        self.quota = quota  # the app's: a socket is a session, as an MCP session is
        self.origins = allowed_origins(settings)
        self.hosts = allowed_hosts(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        client = client_key(scope)
        try:
            check_host(headers, self.hosts)
            if origin is not None and not origin_allowed(origin, headers, self.origins):
                raise OriginNotAllowed("WebSocket connections from this origin are not allowed")
            holder = await self.quota.take_async(client, session_token(headers))
        except EnvError as exc:
            await self._refuse(receive, send, exc)
            return
        token = LIVE_SOCKET.set(True)  # sessions made for this socket are not "detached"
        framed: list[EnvError] = []
        kept = FRAMED.set(framed)
        caller = CALLER.set(client)
        gone: list[OSError] = []  # set when a send finds the client gone
        try:
            await self.app(scope, self._guarded(receive, send), self._typed(send, framed, gone))
        except RuntimeError:
            # OpenEnv answers a send that failed with an error frame, whose send fails too
            # (starlette: no send after close): the client left, and there is nobody to tell.
            if not gone:
                raise
        finally:
            CALLER.reset(caller)
            FRAMED.reset(kept)
            LIVE_SOCKET.reset(token)
            await self.quota.release_async(holder)

    @staticmethod
    def _typed(send: Send, framed: list[EnvError], gone: list[OSError]) -> Send:
        async def typed_send(message: Message) -> None:
            if message["type"] == "websocket.send":
                message = _with_code(message, framed) if framed else _envelope_refusal(message)
            try:
                await send(message)
            except OSError as exc:  # uvicorn's ClientDisconnected
                gone.append(exc)
                raise

        return typed_send

    def _guarded(self, receive: Receive, send: Send) -> Callable[[], Awaitable[Message]]:
        connected = False

        async def guarded_receive() -> Message:
            nonlocal connected
            while True:
                if not connected:
                    message = await receive()
                    connected = True
                    return message
                try:
                    async with asyncio.timeout(self.idle_seconds):
                        message = await receive()
                except TimeoutError:
                    await send({"type": "websocket.close", "code": 1001, "reason": "idle"})
                    return {"type": "websocket.disconnect", "code": 1001}
                if message["type"] != "websocket.receive":
                    return message
                problem = frame_problem(message)
                if problem is None:
                    return message
                await send({"type": "websocket.send", "text": problem})

        return guarded_receive

    @staticmethod
    async def _refuse(receive: Receive, send: Send, exc: EnvError) -> None:
        # Accept, say why in OpenEnv's error frame, close: what OpenEnv clients can read.
        message = await receive()
        if message["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": _error_frame(exc.detail, exc.code)})
        retry = exc.status in (429, 503)  # 1013: try again later; 1008: policy
        await send({"type": "websocket.close", "code": 1013 if retry else 1008})


def guard_websockets(routes: list[Any], settings: Settings, quota: SessionQuota) -> None:
    for route in routes:
        if isinstance(route, WebSocketRoute) and route.path == "/ws":
            route.app = WebSocketGuard(route.app, settings, quota)
        elif isinstance(route, WebSocketRoute) and route.path == "/mcp":
            route.app = refuse_mcp_socket


async def refuse_mcp_socket(scope: Scope, receive: Receive, send: Send) -> None:
    """OpenEnv's WebSocket /mcp, answered: its session's environment would serve no MCP
    method, so the socket is told where the tools are and closed, holding no session."""
    if (await receive())["type"] != "websocket.connect":
        return
    message = "MCP over a WebSocket is not served: use POST /mcp (MCP's streamable HTTP)"
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": message}}
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.send", "text": json.dumps(error)})
    await send({"type": "websocket.close", "code": 1008})


def install_guards(app: Any, settings: Settings, limiter: RateLimit | None = None) -> RateLimit:
    """The HTTP guard (and CORS, when origins are allowed) on `app`; returns the rate
    limiter that the reset route and OpenEnv's routes share (`limiter`, or a new one)."""
    if allowed_origins(settings):
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=allowed_origins(settings),
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=["Retry-After"],
        )
    app.add_middleware(HttpGuard, settings=settings)  # before the lazy mount and routes
    return limiter or creation_limit(settings)


def session_token(headers: Headers) -> str | None:
    """The submitter token a session opens with (`Authorization: Bearer dce_...`), if any:
    it raises the session quota (client_limits). Other credentials (a private Space's
    `Bearer hf_...` is for Hugging Face's proxy) are not this server's: none is read."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token.startswith(tokens.PREFIX) else None


def creation_limit(settings: Settings, buckets: Buckets | None = None) -> RateLimit:
    """The limit on resets and session creations, one bucket per client for all of them
    (shared by the server's processes when `buckets` are in their limit store); none under
    the local profile unless set (client_limits.creation_rate)."""
    burst, per_second = creation_rate(settings) or (None, 0.0)
    return RateLimit("creations", burst, per_second, buckets)
