"""Shared resources of the app, reached through FastAPI dependencies."""

from __future__ import annotations

from fastapi import Request

from dataclean_env.sessions import EpisodeStore
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry


def get_store(request: Request) -> EpisodeStore:
    return request.app.state.store


def get_registry(request: Request) -> TaskRegistry:
    return request.app.state.store.registry


def get_settings(request: Request) -> Settings:
    return request.app.state.settings
