"""Prometheus metrics (`GET /metrics`) and structured JSON request logs.

`ObservabilityMiddleware` (pure ASGI, so it adds no task or thread hop) counts every HTTP
request by route template, method and status, times it, and after each request sets the
open episodes and sessions (`observe_open`). Engine time is observed where engine work runs (`routes.episodes.run_sized`).

Several worker processes (`server --workers N`) share one view: the supervisor sets
`PROMETHEUS_MULTIPROC_DIR`, every process writes its samples there, and /metrics on any
worker sums them (prometheus-client's multiprocess mode).

With `DCE_LOG_JSON=true` each request is also logged as one JSON line on the
`dataclean_env.requests` logger: time, method, path, route, status, milliseconds, and the
episode id and operation when the request names them (query, header or JSON body), cut to
the longest valid one.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
import time
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dataclean_env.schemas import MAX_EPISODE_ID, MAX_OPERATION_NAME

MULTIPROCESS = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
# Step round trips of this server are 1-10 ms on small tables and up to seconds on 100k rows.
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10)
STEP_ROUTES = frozenset({"/step", "/step/{task_id}"})
# A name from the body, query or header is logged cut to the longest valid one, so a refused
# request cannot write a log line of the body's size.

REQUESTS = Counter("dce_requests", "HTTP requests answered", ["method", "route", "status"])
ERRORS = Counter("dce_errors", "HTTP requests answered with a 4xx or 5xx", ["route", "status"])
REQUEST_SECONDS = Histogram(
    "dce_request_seconds", "HTTP request time", ["route"], buckets=LATENCY_BUCKETS
)
STEP_SECONDS = Histogram(
    "dce_step_seconds",
    "Step round trip inside the server (REST and /ws)",
    ["door"],
    buckets=LATENCY_BUCKETS,
)
ENGINE_SECONDS = Histogram(
    "dce_engine_seconds", "Time in the engine (reset, step, state work)", buckets=LATENCY_BUCKETS
)
EPISODES = Gauge(
    "dce_open_episodes",
    "Episodes held: client ids, task defaults, leaderboard episodes and those of sessions",
    multiprocess_mode="livesum",
)
SESSIONS = Gauge(
    "dce_open_sessions",
    "OpenEnv sessions held: /ws connections, /mcp sessions (MCP and OpenEnv's JSON-RPC)",
    multiprocess_mode="livesum",
)

request_log = logging.getLogger("dataclean_env.requests")
# Children of the labelled metrics, looked up once: `labels()` takes a lock and builds its
# key on every call, a few microseconds per request on the hottest path.
_REST_STEP_SECONDS = STEP_SECONDS.labels("rest")
_WS_STEP_SECONDS = STEP_SECONDS.labels("ws")


def observe_open(state: Any) -> None:
    """Set the open-episode and open-session gauges from what the app holds now.

    Every session (a /ws connection, an MCP session, an OpenEnv JSON-RPC session) is one of
    OpenEnv's session server; its episode, once reset, is counted with the store's, unless it
    is a leaderboard episode it joined (the store holds and counts that one)."""
    store = getattr(state, "store", None)
    mount = getattr(state, "openenv", None)
    sessions = getattr(mount, "server", None)  # None until OpenEnv's routes are mounted
    envs = list(sessions._sessions.values()) if sessions is not None else []
    own = {
        id(env.episode)
        for env in envs
        if getattr(env, "episode", None) is not None
        and (store is None or store.issued(env.episode.episode_id) is not env.episode)
    }
    SESSIONS.set(len(envs))
    if store is not None:
        EPISODES.set(store.held() + len(own))


@functools.lru_cache(maxsize=1024)  # bounded: methods x route templates x statuses
def _counters(method: str, route: str, status: int) -> tuple[Any, ...]:
    """The request counter (and error counter, for a 4xx or 5xx) of one kind of answer."""
    code = str(status)
    requests = REQUESTS.labels(method, route, code)
    return (requests, ERRORS.labels(route, code)) if status >= 400 else (requests,)


def metrics_response() -> Response:
    if MULTIPROCESS:
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        body = generate_latest(registry)
    else:
        body = generate_latest()
    return Response(body, media_type=CONTENT_TYPE_LATEST)


def enable_json_logs() -> None:
    """One JSON object per line on stderr for `dataclean_env.requests` (idempotent)."""
    request_log.setLevel(logging.INFO)
    request_log.propagate = False
    if not any(getattr(h, "dce_json", False) for h in request_log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler.dce_json = True  # type: ignore[attr-defined]
        request_log.addHandler(handler)


def _query_value(query: bytes, key: bytes) -> str | None:
    for part in query.split(b"&"):
        name, _, value = part.partition(b"=")
        if name == key:
            return value.decode("latin-1")
    return None


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            text: str = value.decode("latin-1")
            return text
    return None


def _from_body(body: bytes) -> tuple[str | None, str | None]:
    try:
        data = json.loads(body) if body else {}
    except ValueError:
        return None, None
    if not isinstance(data, dict):
        return None, None
    inner = data.get("action")
    action = inner if isinstance(inner, dict) else data
    episode, operation = data.get("episode_id"), action.get("operation")
    return (
        episode if isinstance(episode, str) else None,
        operation if isinstance(operation, str) else None,
    )


class ObservabilityMiddleware:
    def __init__(self, app: ASGIApp, json_logs: bool = False):
        self.app = app
        self.json_logs = json_logs
        if json_logs:
            enable_json_logs()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            try:
                await self.app(scope, receive, send)
            finally:
                observe_open(getattr(scope["app"], "state", None))
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500
        body = bytearray()

        async def receive_logged() -> Message:
            message = await receive()
            if message["type"] == "http.request" and len(body) < 65536:
                body.extend(message.get("body", b""))
            return message

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive_logged if self.json_logs else receive, send_status)
        finally:
            elapsed = time.perf_counter() - start
            # The router leaves the matched route in the scope: its template is a bounded label.
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            for counter in _counters(scope["method"], route, status):
                counter.inc()
            REQUEST_SECONDS.labels(route).observe(elapsed)
            if route in STEP_ROUTES:
                _REST_STEP_SECONDS.observe(elapsed)
            else:  # a step opens no episode or session; counting them costs O(sessions)
                observe_open(getattr(scope["app"], "state", None))
            if self.json_logs:
                self._log(scope, route, status, elapsed, bytes(body))

    def _log(self, scope: Scope, route: str, status: int, elapsed: float, body: bytes) -> None:
        episode, operation = _from_body(body)
        episode = (
            episode
            or _query_value(scope.get("query_string", b""), b"episode_id")
            or _header(scope, b"x-episode-id")
        )
        record: dict[str, Any] = {
            "ts": round(time.time(), 3),
            "method": scope["method"],
            "path": scope["path"],
            "route": route,
            "status": status,
            "ms": round(elapsed * 1000, 3),
            "episode": _cut(episode, MAX_EPISODE_ID),
            "operation": _cut(operation, MAX_OPERATION_NAME),
            "worker": os.getpid(),
        }
        request_log.info(json.dumps(record, separators=(",", ":")))


def _cut(text: str | None, limit: int) -> str | None:
    return text[:limit] + "…" if text is not None and len(text) > limit else text


def observe_ws_step(episode: str | None, operation: str, status: str, elapsed: float) -> None:
    """A /ws step: into the step histogram, and the JSON log when it is on."""
    _WS_STEP_SECONDS.observe(elapsed)
    if request_log.isEnabledFor(logging.INFO):
        record = {
            "ts": round(time.time(), 3),
            "method": "WS",
            "path": "/ws",
            "route": "/ws",
            "status": status,
            "ms": round(elapsed * 1000, 3),
            "episode": episode,
            "operation": operation,
            "worker": os.getpid(),
        }
        request_log.info(json.dumps(record, separators=(",", ":")))


async def metrics_endpoint(request: Request) -> Response:
    """Prometheus text format: requests and errors by route and status, step and engine
    latency histograms, open episodes and WebSocket sessions."""
    observe_open(request.app.state)
    return metrics_response()
