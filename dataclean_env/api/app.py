"""The FastAPI application: wires settings, the task registry, the episode store and routes."""

from __future__ import annotations

import logging

from fastapi import FastAPI

from dataclean_env import __version__
from dataclean_env.api import episodes, meta
from dataclean_env.api.errors import install_error_handlers
from dataclean_env.api.openenv_routes import mount_openenv
from dataclean_env.sessions import EpisodeStore
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
    app.state.openenv = mount_openenv(app, registry, settings)
    log.info("loaded %d tasks: %s", len(registry.task_ids()), ", ".join(registry.task_ids()))
    return app
