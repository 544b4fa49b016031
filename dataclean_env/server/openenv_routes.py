"""OpenEnv's server pieces on our app: WS /ws, GET /schema, GET /metadata, POST /mcp.

`HTTPEnvServer.register_routes(mode="production")` leaves out OpenEnv's stateless HTTP
/reset, /step and /state, which our stateful routes replace. It always adds its own
/health; ours (with `tasks_loaded`) answers, so theirs is removed to keep /docs truthful.
Our routers must be included before this runs: the first matching route wins, and OpenEnv
adds catch-alls like /{env_name}/tasks.

OpenEnv's routes get the same edge as ours (`guards`): /ws frames are checked and idle
sockets closed, its POST routes refuse invalid Unicode, session creation is rate-limited,
and sessions without a connection expire (`sessions.SessionServer`).
"""

from __future__ import annotations

from functools import partial

from fastapi import FastAPI
from fastapi.routing import APIRoute
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.types import ConcurrencyConfig

from dataclean_env import ENV_NAME
from dataclean_env.models import CleaningAction, CleaningObservation, CleaningState
from dataclean_env.server.data_cleaning_environment import DataCleaningEnvironment
from dataclean_env.server.guards import guard_openenv_posts, guard_websockets
from dataclean_env.server.rate_limit import RateLimiter
from dataclean_env.server.routes import meta
from dataclean_env.server.sessions import SessionServer
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry


def mount_openenv(
    app: FastAPI, registry: TaskRegistry, settings: Settings, limiter: RateLimiter
) -> HTTPEnvServer:
    server = SessionServer(
        partial(DataCleaningEnvironment, registry, app.state.store.issued),
        CleaningAction,
        CleaningObservation,
        # session_timeout stays None: OpenEnv's own reaper would also end the sessions of
        # open sockets; SessionServer expires detached ones, the /ws guard idle sockets.
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=settings.max_sessions, session_timeout=None
        ),
        env_name=ENV_NAME,
        state_cls=CleaningState,
        detached_seconds=settings.detached_session_seconds,
    )
    ours = {id(route) for route in app.router.routes}
    server.register_routes(app, mode="production")
    guard_openenv_posts(app.router.routes, ours, limiter)
    guard_websockets(app.router.routes, settings, limiter)
    app.router.routes[:] = [
        route
        for route in app.router.routes
        if not (isinstance(route, APIRoute) and route.path == "/health")
        or route.endpoint is meta.health
    ]
    return server
