"""The FastAPI application: wires settings, the task registry, the episode store and routes.

`app` is built on first access (so importing this module costs nothing and reads no data);
`main()` serves it with uvicorn (the `server` console script).
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

import uvicorn
from fastapi import FastAPI

from dataclean_env import ENV_NAME, __version__
from dataclean_env.errors import EnvError
from dataclean_env.leaderboard.service import Leaderboard
from dataclean_env.server.episode_store import EpisodeStore
from dataclean_env.server.guards import install_guards
from dataclean_env.server.http_errors import install_error_handlers
from dataclean_env.server.openapi_doc import install_openapi
from dataclean_env.server.openenv_routes import mount_openenv
from dataclean_env.server.routes import episodes, leaderboard, meta, schema, web
from dataclean_env.server.serving import uvicorn_options
from dataclean_env.settings import Settings, get_settings
from dataclean_env.tasks import TaskRegistry, registry_for

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, registry: TaskRegistry | None = None) -> FastAPI:
    settings = settings or get_settings()
    registry = registry or registry_for(settings)
    app = FastAPI(
        title="Data Cleaning OpenEnv",
        version=__version__,
        description=(
            "Clean a dirty table one operation per step; each step is scored cell by cell "
            "against a hidden gold table."
        ),
    )
    app.state.settings = settings
    app.state.store = EpisodeStore(
        registry, capacity=settings.max_episodes, ttl_seconds=settings.episode_ttl_seconds
    )
    install_error_handlers(app)
    app.include_router(meta.router)
    app.include_router(episodes.router)
    app.include_router(web.router)  # the browser page (before OpenEnv's catch-all routes)
    app.state.leaderboard = Leaderboard(settings, app.state.store)  # opens its database lazily
    app.include_router(leaderboard.router)
    app.include_router(schema.router)
    app.state.limiter = limiter = install_guards(app, settings)
    app.state.openenv = mount_openenv(app, registry, settings, limiter)
    install_openapi(app, registry.task_ids(), ENV_NAME)
    log.info("loaded %d tasks: %s", len(registry.task_ids()), ", ".join(registry.task_ids()))
    return app


def __getattr__(name: str) -> Any:
    # `from dataclean_env.server.app import app` (and uvicorn's "module:app") build the app on
    # first use, once; OpenEnv's convention is a module-level `app`.
    if name == "app":
        globals()["app"] = application = create_app()
        return application
    raise AttributeError(name)


def main() -> None:
    settings = get_settings()
    parser = argparse.ArgumentParser(description="Serve Data Cleaning OpenEnv.")
    parser.add_argument("--host", default=settings.host)
    parser.add_argument("--port", type=int, default=settings.port)
    args = parser.parse_args()
    app = create_app(settings)
    try:  # migrations and the secret at start-up, not on the first leaderboard call
        app.state.leaderboard.open()
    except EnvError as error:  # logged; the leaderboard answers 503 until it can open
        log.error("%s", error.detail)
    uvicorn.run(app, host=args.host, port=args.port, **uvicorn_options(settings))
