"""Shared resources of the app, reached through FastAPI dependencies.

They are `async` on purpose: FastAPI runs a plain `def` dependency in the thread pool, a hop
that costs more than the lookup itself.
"""

from __future__ import annotations

from fastapi import Request

from dataclean_env.server.episode_store import EpisodeStore
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry


async def get_store(request: Request) -> EpisodeStore:
    return request.app.state.store


async def get_registry(request: Request) -> TaskRegistry:
    return request.app.state.store.registry


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings
