"""OpenEnv's server pieces on our app: WS /ws, GET /schema, GET /metadata, POST /mcp.

`HTTPEnvServer.register_routes(mode="production")` leaves out OpenEnv's stateless HTTP
/reset, /step and /state, which our stateful routes replace. It always adds its own
/health; ours (with `tasks_loaded`) answers, so theirs is removed to keep /docs truthful.
Our routers must be included before this runs: the first matching route wins, and OpenEnv
adds catch-alls like /{env_name}/tasks.

OpenEnv's routes get the same edge as ours (`guards`): /ws frames are checked and idle
sockets closed, its POST routes refuse invalid Unicode, session creation is rate-limited,
and sessions without a connection expire (`sessions.SessionServer`).

Mounted lazily: importing OpenEnv's server (fastmcp, mcp, its harness) takes seconds, and
/health, /reset, /step, /state and /tasks do not need it. `OpenEnvMount` imports and
registers it once, in a worker thread: right after start-up (`warm`, from the lifespan), or
when the first request that needs it arrives (`LazyOpenEnvMiddleware` makes that request
wait for the mount, so it is answered exactly as if OpenEnv had been there from the start).
A mount that fails (an import error, descriptors exhausted at start-up) is remembered as
`failure`: /health answers 503 naming it, and the request that waited answers 503 with
Retry-After. Then `on_failure` is called: the `server` command sets it to end the process
(app.main), so its supervisor starts a new one; an app without it (tests, `uvicorn main:app`)
tries again on the next such request, and a mount that succeeds clears the failure.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from dataclean_env import ENV_NAME
from dataclean_env.rate_limit import RateLimit
from dataclean_env.server.http.guards import guard_openenv_posts, guard_websockets
from dataclean_env.server.http.http_errors import error_response
from dataclean_env.server.http.routes import meta
from dataclean_env.server.limits.limit_store import Counts
from dataclean_env.server.processes.affinity import Place
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry

log = logging.getLogger(__name__)

MOUNT_RETRY_S = 5  # Retry-After of a request that found the mount failed

# Paths answered by our own routes alone: they never wait for the mount (each entry also
# covers the paths under it: /reset/..., /static/...). The OpenAPI document (/openapi.json,
# and "/", which lists its paths) waits, so it names the same paths from start-up on.
OWN_PATHS = (
    "/health",
    "/tasks",
    "/validate",
    "/reset",
    "/step",
    "/state",
    "/web",
    "/ui",
    "/static/",
    "/episodes/",
    "/leaderboard",
    "/schema/compact",
    "/metrics",
    "/docs",
    "/redoc",
)


def is_own_path(path: str) -> bool:
    """True for a path our own routes answer (it never waits for OpenEnv's mount)."""
    return path.startswith(OWN_PATHS)


def whole_or_share(settings: Settings, counts: Counts, cap: int) -> int:
    """A server-wide cap as one process counts it: whole when the processes count together
    (a shared limit store), else this process's share (`Place.share`)."""
    return cap if counts.shared else Place.of(settings).share(cap)


def mount_openenv(
    app: FastAPI, registry: TaskRegistry, settings: Settings, limiter: RateLimit
) -> Any:
    """Register OpenEnv's routes on `app` now, guarded like ours; returns the SessionServer."""
    from dataclean_env.openenv_light import skip_package_inits

    skip_package_inits()
    from openenv.core.env_server.types import ConcurrencyConfig

    from dataclean_env.models import CleaningAction, CleaningObservation, CleaningState
    from dataclean_env.server.openenv.data_cleaning_environment import DataCleaningEnvironment
    from dataclean_env.server.openenv.sessions import SessionServer

    counts = app.state.limits.counts
    max_sessions = whole_or_share(settings, counts, settings.max_sessions)
    server = SessionServer(
        # copies=False: the server serialises each observation as soon as it is made
        partial(
            DataCleaningEnvironment,
            registry,
            app.state.store.join,
            app.state.store.memory,
            copies=False,
        ),
        CleaningAction,
        CleaningObservation,
        # session_timeout stays None: OpenEnv's own reaper would also end the sessions of
        # open sockets; SessionServer expires detached ones, the /ws guard idle sockets.
        # SessionServer counts `max_sessions` (the whole server's when the processes share
        # their limit store, else this process's share); OpenEnv's own count is never lower.
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=max_sessions, session_timeout=None
        ),
        env_name=ENV_NAME,
        state_cls=CleaningState,
        detached_seconds=settings.detached_session_seconds,
        max_sessions=max_sessions,
        counts=counts,
    )
    ours = {id(route) for route in app.router.routes}
    server.register_routes(app, mode="production")
    guard_openenv_posts(app.router.routes, ours, limiter)
    guard_websockets(app.router.routes, settings, app.state.session_quota)
    app.router.routes[:] = [
        route
        for route in app.router.routes
        if not (isinstance(route, APIRoute) and route.path == "/health")
        or route.endpoint is meta.health
    ]
    app.openapi_schema = None  # /docs and / list the new routes
    return server


def _import_openenv() -> None:
    """The slow part of a mount (imports only), safe to run in a worker thread."""
    from dataclean_env.openenv_light import skip_package_inits

    skip_package_inits()
    import openenv.core.env_server.http_server

    # register_routes imports the harness (openai types and more, ~2 s) to ask whether the
    # factory makes a harness environment: here, in the thread, not on the event loop.
    import openenv.core.harness.environment  # noqa: F401

    import dataclean_env.server.openenv.data_cleaning_environment
    import dataclean_env.server.openenv.sessions  # noqa: F401


class MountFailed(RuntimeError):
    """OpenEnv's routes could not be mounted; the message is the mount's `failure`."""


class OpenEnvMount:
    """Mounts OpenEnv's routes on `app` once; `server` is the HTTPEnvServer after that."""

    def __init__(
        self, app: FastAPI, registry: TaskRegistry, settings: Settings, limiter: RateLimit
    ):
        self.app, self.registry, self.settings, self.limiter = app, registry, settings, limiter
        self.server: Any = None
        self.failure: str | None = None  # why the last mount failed, until one succeeds
        self.on_failure: Callable[[str], None] | None = None  # called with `failure`
        self._imported = threading.Event()
        self._import_lock = threading.Lock()
        self._register_lock = threading.Lock()
        self._mount_lock: asyncio.Lock | None = None

    def _import(self) -> None:
        with self._import_lock:
            if not self._imported.is_set():
                _import_openenv()
                self._imported.set()

    def _register(self) -> None:
        with self._register_lock:  # `now` (any thread) and `ensure` (the loop) may race
            if self.server is None:
                self.server = mount_openenv(self.app, self.registry, self.settings, self.limiter)

    def now(self) -> Any:
        """Mount synchronously (tests, scripts); idempotent."""
        if self.server is None:
            with self._recording_failure():
                self._import()
                self._register()
        return self.server

    @contextmanager
    def _recording_failure(self) -> Iterator[None]:
        try:
            yield
        except Exception as error:
            self.failure = f"{type(error).__name__}: {error}"
            log.exception("OpenEnv routes could not be mounted")
            if self.on_failure is not None:
                self.on_failure(self.failure)
            raise MountFailed(self.failure) from error
        self.failure = None

    def __getattr__(self, name: str) -> Any:
        # The SessionServer's attributes (active_sessions, _sessions, ...), mounting first.
        if name.startswith("__") or name in (
            "app",
            "registry",
            "settings",
            "limiter",
            "server",
            "on_failure",
        ):
            raise AttributeError(name)
        return getattr(self.now(), name)

    async def ensure(self) -> None:
        """Mount without blocking the event loop: imports in a thread, routes on the loop."""
        if self.server is not None:
            return
        if self._mount_lock is None:
            self._mount_lock = asyncio.Lock()
        async with self._mount_lock:
            if self.server is None:
                with self._recording_failure():
                    await asyncio.to_thread(self._import)
                    self._register()
                log.info("OpenEnv routes mounted")


class LazyOpenEnvMiddleware:
    """Holds every request but our own hot paths until OpenEnv's routes are mounted."""

    def __init__(self, app: ASGIApp, mount: OpenEnvMount):
        self.app, self.mount = app, mount

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            self.mount.server is None
            and scope["type"] in ("http", "websocket")
            and not is_own_path(scope["path"])
        ):
            try:
                await self.mount.ensure()
            except Exception:
                if scope["type"] != "http":
                    raise  # a socket not accepted is refused by the server
                unavailable = error_response(
                    503,
                    "OPENENV_UNAVAILABLE",
                    f"OpenEnv's routes could not be mounted ({self.mount.failure}); "
                    f"retry in {MOUNT_RETRY_S} s",
                    retry_after=MOUNT_RETRY_S,
                )
                await unavailable(scope, receive, send)
                return
        await self.app(scope, receive, send)
