"""The lean routes (`routes.episodes.LeanRoute`) answer reset, step and state exactly as
FastAPI's own handling of the same routes (dependencies, endpoint) would: same status,
headers that matter, and bytes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from dataclean_env.server.app import create_app
from dataclean_env.server.routes import episodes
from dataclean_env.server.routes.episodes import LeanRoute
from dataclean_env.settings import Settings

TASK = "easy_dedup_rename"
# (method, path, JSON body or None, headers): a script of calls, each answered by both apps.
CALLS: list[tuple[str, str, object, dict[str, str]]] = [
    ("POST", f"/reset/{TASK}", {"seed": 3, "episode_id": "lane-1"}, {}),
    ("POST", "/reset", {"task_id": TASK, "seed": 4, "episode_id": "lane-2"}, {}),
    ("POST", f"/reset/{TASK}", None, {}),  # the task's default episode
    ("POST", f"/step/{TASK}", {"operation": "remove_duplicates", "episode_id": "lane-1"}, {}),
    ("POST", f"/step/{TASK}?episode_id=lane-2", {"operation": "remove_duplicates"}, {}),
    ("POST", "/step", {"action": {"operation": "strip_whitespace"}}, {"X-Episode-Id": "lane-2"}),
    ("POST", "/step?episode_id=lane-2", {"operation": "x"}, {"X-Episode-Id": "lane-1"}),
    ("POST", f"/step/{TASK}", {"operation": "remove_duplicates"}, {}),
    ("POST", f"/step/{TASK}", {"operation": "fill_missing", "parameters": {"nope": 1}}, {}),
    ("POST", "/step/no_such_task", {"operation": "remove_duplicates"}, {}),
    ("POST", f"/step/{TASK}", b"{not json", {}),
    ("POST", f"/step/{TASK}", {"operation": "noop", "episode_id": "no-such-episode"}, {}),
    ("POST", f"/step/{TASK}", {"operation": "noop", "task_id": "medium_missing_dtype"}, {}),
    ("GET", f"/state/{TASK}", None, {}),
    ("GET", f"/state/{TASK}?episode_id=lane-1", None, {}),
    ("GET", "/state?episode_id=lane-2", None, {}),
    ("GET", f"/state?task_id={TASK}", None, {}),
    ("GET", "/state?task_id=", None, {}),
    ("GET", "/state", None, {"X-Episode-Id": "lane-1"}),
    ("HEAD", f"/state/{TASK}", None, {}),  # served as its GET, without the body
    ("POST", "/step/", {"operation": "noop"}, {}),  # a trailing slash: FastAPI redirects
    ("PUT", f"/step/{TASK}", {"operation": "noop"}, {}),  # 405 from FastAPI
]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[TestClient, TestClient]]:
    def settings(name: str) -> Settings:
        return Settings(leaderboard_db=tmp_path / f"{name}.sqlite3")

    with (
        TestClient(create_app(settings("lean"))) as lean,
        TestClient(create_app(settings("plain"))) as plain,
    ):
        yield lean, plain


def _same_ids(body: bytes) -> bytes:
    # Server-issued ids (the default episodes') are random: the same in both, by name.
    return re.sub(rb"dce:[A-Za-z0-9_-]{22}", b"dce:<issued>", body)


def _call(client: TestClient, method: str, path: str, body: object, headers: dict[str, str]):
    if isinstance(body, bytes):
        headers = {**headers, "content-type": "application/json"}
        return client.request(method, path, content=body, headers=headers)
    if body is None:
        return client.request(method, path, headers=headers)
    return client.request(method, path, json=body, headers=headers)


def test_the_lean_routes_answer_byte_for_byte_as_fastapi(
    pair: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch
):
    lean, plain = pair
    for method, path, body, headers in CALLS:
        ours = _call(lean, method, path, body, headers)
        with monkeypatch.context() as fastapi_handles:  # the routes as plain APIRoutes
            fastapi_handles.setattr(LeanRoute, "handle", APIRoute.handle)
            theirs = _call(plain, method, path, body, headers)
        where = f"{method} {path}"
        assert ours.status_code == theirs.status_code, where
        assert _same_ids(ours.content) == _same_ids(theirs.content), where
        assert ours.headers.get("content-type") == theirs.headers.get("content-type"), where
        assert ours.headers.get("location") == theirs.headers.get("location"), where


def test_each_hot_path_has_one_route(client: TestClient, monkeypatch: pytest.MonkeyPatch):
    """Reset, step and state are LeanRoutes, and a request to them is handled by their
    LeanRoute (no middleware answers it before the router)."""
    assert sorted((r.path, sorted(r.methods)) for r in episodes.router.routes) == [
        ("/reset", ["POST"]),
        ("/reset/{task_id}", ["POST"]),
        ("/state", ["GET"]),
        ("/state/{task_id}", ["GET"]),
        ("/step", ["POST"]),
        ("/step/{task_id}", ["POST"]),
    ]
    assert all(isinstance(r, LeanRoute) for r in episodes.router.routes)
    handled: list[str] = []
    lean_handle = LeanRoute.handle

    async def counting(route: LeanRoute, scope, receive, send) -> None:
        handled.append(f"{scope['method']} {route.path}")
        await lean_handle(route, scope, receive, send)

    monkeypatch.setattr(LeanRoute, "handle", counting)
    assert client.post(f"/reset/{TASK}", json={"episode_id": "hot"}).status_code == 200
    assert client.post(f"/step/{TASK}", json={"operation": "remove_duplicates"}).status_code == 200
    assert client.get("/state", params={"episode_id": "hot"}).status_code == 200
    assert client.get("/health").status_code == 200
    assert client.head(f"/state/{TASK}").status_code == 200  # served as its GET (HeadAsGet)
    assert handled == [
        "POST /reset/{task_id}",
        "POST /step/{task_id}",
        "GET /state",
        "GET /state/{task_id}",
    ]


def test_lean_requests_are_counted_by_route_template(client: TestClient):
    client.post(f"/reset/{TASK}", json={"episode_id": "counted"})
    client.post(f"/step/{TASK}", json={"operation": "remove_duplicates", "episode_id": "counted"})
    client.post("/step", json={"operation": "remove_duplicates", "episode_id": "nope"})
    metrics = client.get("/metrics").text
    assert 'dce_requests_total{method="POST",route="/step/{task_id}",status="200"}' in metrics
    assert 'dce_requests_total{method="POST",route="/reset/{task_id}",status="200"}' in metrics
    assert 'dce_errors_total{route="/step",status="404"}' in metrics
