"""Shared resources of the app, reached through FastAPI dependencies.

They are `async` on purpose: FastAPI runs a plain `def` dependency in the thread pool, a hop
that costs more than the lookup itself.
"""

from __future__ import annotations

from fastapi import Request

from dataclean_env.server.store.episode_store import EpisodeStore
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry


async def get_store(request: Request) -> EpisodeStore:
    store: EpisodeStore = request.app.state.store
    return store


async def get_registry(request: Request) -> TaskRegistry:
    registry: TaskRegistry = request.app.state.store.registry
    return registry


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings
