"""OpenEnv's server pieces on our app: WS /ws, GET /schema, GET /metadata, POST /mcp.

`HTTPEnvServer.register_routes(mode="production")` leaves out OpenEnv's stateless HTTP
/reset, /step and /state, which our stateful routes replace. It always adds its own
/health; ours (with `tasks_loaded`) answers, so theirs is removed to keep /docs truthful.
Our routers must be included before this runs: the first matching route wins, and OpenEnv
adds catch-alls like /{env_name}/tasks.
"""

from __future__ import annotations

from functools import partial

from fastapi import FastAPI
from fastapi.routing import APIRoute
from openenv.core.env_server.http_server import HTTPEnvServer

from dataclean_env import ENV_NAME
from dataclean_env.models import CleaningAction, CleaningObservation, CleaningState
from dataclean_env.server.data_cleaning_environment import DataCleaningEnvironment
from dataclean_env.server.routes import meta
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry


def mount_openenv(app: FastAPI, registry: TaskRegistry, settings: Settings) -> HTTPEnvServer:
    server = HTTPEnvServer(
        partial(DataCleaningEnvironment, registry, app.state.store.issued),
        CleaningAction,
        CleaningObservation,
        max_concurrent_envs=settings.max_sessions,
        env_name=ENV_NAME,
        state_cls=CleaningState,
    )
    server.register_routes(app, mode="production")
    app.router.routes[:] = [
        route
        for route in app.router.routes
        if not (isinstance(route, APIRoute) and route.path == "/health")
        or route.endpoint is meta.health
    ]
    return server
