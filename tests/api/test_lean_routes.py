"""The fast lane (server/fast_lane.py) answers reset, step and state exactly as the
documented FastAPI routes would: same status, headers that matter, and bytes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dataclean_env.server.app import create_app
from dataclean_env.server.fast_lane import FastLane
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
    ("HEAD", f"/state/{TASK}", None, {}),  # left to the APIRoute
    ("POST", "/step/", {"operation": "noop"}, {}),  # a trailing slash: left to FastAPI
    ("PUT", f"/step/{TASK}", {"operation": "noop"}, {}),  # 405 from FastAPI
]


def _without_lane(settings: Settings) -> TestClient:
    app = create_app(settings)
    app.user_middleware = [m for m in app.user_middleware if m.cls is not FastLane]
    return TestClient(app)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[TestClient, TestClient]]:
    def settings(name: str) -> Settings:
        return Settings(leaderboard_db=tmp_path / f"{name}.sqlite3")

    with (
        TestClient(create_app(settings("lane"))) as lane,
        _without_lane(settings("plain")) as plain,
    ):
        yield lane, plain


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


def test_the_lane_answers_byte_for_byte_as_the_routes(pair: tuple[TestClient, TestClient]):
    lane, plain = pair
    assert any(m.cls is FastLane for m in lane.app.user_middleware)
    for method, path, body, headers in CALLS:
        ours = _call(lane, method, path, body, headers)
        theirs = _call(plain, method, path, body, headers)
        where = f"{method} {path}"
        assert ours.status_code == theirs.status_code, where
        assert _same_ids(ours.content) == _same_ids(theirs.content), where
        assert ours.headers.get("content-type") == theirs.headers.get("content-type"), where
        assert ours.headers.get("location") == theirs.headers.get("location"), where


def test_the_lane_serves_the_hot_routes_and_leaves_the_rest(client: TestClient):
    """The lane answers without the router (no route endpoint runs); FastAPI answers
    what the lane leaves."""
    calls: list[str] = []
    router_app = client.app.router

    async def counting(scope, receive, send):  # the router, behind the lane
        calls.append(f"{scope['method']} {scope['path']}")
        await router_app(scope, receive, send)

    stack = client.app.build_middleware_stack()
    client.app.middleware_stack = stack
    lane = stack
    while not isinstance(lane, FastLane):
        lane = lane.app
    inner = lane.app
    while getattr(inner, "app", None) is not router_app:
        inner = inner.app
    inner.app = counting

    assert client.post(f"/reset/{TASK}", json={"episode_id": "hot"}).status_code == 200
    assert client.post(f"/step/{TASK}", json={"operation": "remove_duplicates"}).status_code == 200
    assert client.get("/state", params={"episode_id": "hot"}).status_code == 200
    assert calls == []
    assert client.get("/health").status_code == 200
    assert client.head(f"/state/{TASK}").status_code == 405  # as FastAPI's GET routes answer
    assert calls == ["GET /health", f"HEAD /state/{TASK}"]


def test_lane_requests_are_counted_by_route_template(client: TestClient):
    client.post(f"/reset/{TASK}", json={"episode_id": "counted"})
    client.post(f"/step/{TASK}", json={"operation": "remove_duplicates", "episode_id": "counted"})
    client.post("/step", json={"operation": "remove_duplicates", "episode_id": "nope"})
    metrics = client.get("/metrics").text
    assert 'dce_requests_total{method="POST",route="/step/{task_id}",status="200"}' in metrics
    assert 'dce_requests_total{method="POST",route="/reset/{task_id}",status="200"}' in metrics
    assert 'dce_errors_total{route="/step",status="404"}' in metrics
