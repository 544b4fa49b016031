"""The OpenAPI document names the same paths from start-up on: the first /openapi.json of
a server whose OpenEnv routes are not mounted yet waits for the mount (over real HTTP)."""

from __future__ import annotations

import httpx

from dataclean_env.settings import Settings
from tests.web import LiveServer


def test_the_first_document_already_has_openenvs_paths() -> None:
    with LiveServer(Settings(openenv_mount="lazy")) as server:
        assert server.app.state.openenv.server is None  # nothing has asked for it yet
        first = httpx.get(f"{server.url}/openapi.json", timeout=120).json()["paths"]
        root = httpx.get(f"{server.url}/", timeout=30).json()["endpoints"]
        assert {"/schema", "/metadata", "/mcp", "/reset/{task_id}"} <= set(first)
        assert httpx.get(f"{server.url}/openapi.json", timeout=30).json()["paths"] == first
        assert "GET /schema" in root and "GET /docs" in root
