"""HEAD is answered wherever GET is, over real HTTP: every GET route of the app (its own,
OpenEnv's, the docs and their assets, the static files) answers HEAD with GET's status and
headers and no body."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Mount

from dataclean_env import ENV_NAME
from dataclean_env.settings import Settings
from tests.web import LiveServer

# The value each path parameter takes (ids that exist where one is needed).
PARAMS = {"task_id": "easy_dedup_rename", "env_name": ENV_NAME, "run_id": "run-none"}


def get_paths(routes: list[Any]) -> Iterator[str]:
    """Each GET route's path template; a mount's first file; routers walked into."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from get_paths(included.routes)
        elif isinstance(route, Mount):
            first = min(Path(route.app.all_directories[0]).iterdir())  # type: ignore[attr-defined]
            yield f"{route.path}/{first.name}"
        elif "GET" in (getattr(route, "methods", None) or ()):
            yield route.path


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer(Settings(openenv_mount="eager")) as live:
        yield live


def test_every_get_route_answers_head_as_get(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as http:
        episode = http.post("/reset/easy_dedup_rename", json={"episode_id": "head-1"})
        values = {**PARAMS, "episode_id": episode.json()["observation"]["episode_id"]}
        values["name"] = "index.html"
        paths = sorted({path.format(**values) for path in get_paths(server.app.routes)})
        assert {"/web", "/health", "/tasks", "/docs", "/redoc", "/metadata", "/schema"} <= set(
            paths
        )
        assert len(paths) >= 25, paths
        for path in paths:
            got, head = http.get(path), http.head(path)
            assert (path, head.status_code) == (path, got.status_code)
            assert head.content == b"", path
            if path != "/metrics":  # its counters move between the two calls
                assert head.headers.get("content-length") == got.headers.get("content-length")
            assert head.headers.get("content-type") == got.headers.get("content-type"), path
        assert http.head("/web").status_code == 200
