"""The episode URLs (reset, step, state) are served by one code path, `EpisodeRoutes`: every
call of a script answers with its exact status and error code, a request to those URLs
reaches its handler and nothing else (FastAPI's declared endpoints never run), and the
metrics label it by its route template."""

from __future__ import annotations

from fastapi.testclient import TestClient

from dataclean_env.server.http.routes import episodes

TASK = "easy_dedup_rename"
# (method, path, JSON body or None, headers, status, error code): a script of calls, in order.
CALLS: list[tuple[str, str, object, dict[str, str], int, str | None]] = [
    ("POST", f"/reset/{TASK}", {"seed": 3, "episode_id": "lane-1"}, {}, 200, None),
    ("POST", "/reset", {"task_id": TASK, "seed": 4, "episode_id": "lane-2"}, {}, 200, None),
    ("POST", f"/reset/{TASK}", None, {}, 200, None),  # the task's default episode
    (
        "POST",
        f"/step/{TASK}",
        {"operation": "remove_duplicates", "episode_id": "lane-1"},
        {},
        200,
        None,
    ),
    ("POST", f"/step/{TASK}?episode_id=lane-2", {"operation": "remove_duplicates"}, {}, 200, None),
    (
        "POST",
        "/step",
        {"action": {"operation": "strip_whitespace"}},
        {"X-Episode-Id": "lane-2"},
        422,
        "UNKNOWN_OPERATION",
    ),
    (
        "POST",
        "/step?episode_id=lane-2",
        {"operation": "x"},
        {"X-Episode-Id": "lane-1"},
        422,
        "UNKNOWN_OPERATION",
    ),
    ("POST", f"/step/{TASK}", {"operation": "remove_duplicates"}, {}, 200, None),
    (
        "POST",
        f"/step/{TASK}",
        {"operation": "fill_missing", "parameters": {"nope": 1}},
        {},
        422,
        "INVALID_PARAMETERS",
    ),
    ("POST", "/step/no_such_task", {"operation": "remove_duplicates"}, {}, 404, "UNKNOWN_TASK"),
    ("POST", f"/step/{TASK}", b"{not json", {}, 422, "INVALID_JSON"),
    (
        "POST",
        f"/step/{TASK}",
        {"operation": "noop", "episode_id": "no-such-episode"},
        {},
        404,
        "UNKNOWN_EPISODE",
    ),
    (
        "POST",
        f"/step/{TASK}",
        {"operation": "noop", "task_id": "medium_missing_dtype"},
        {},
        409,
        "TASK_MISMATCH",
    ),
    ("GET", f"/state/{TASK}", None, {}, 200, None),
    ("GET", f"/state/{TASK}?episode_id=lane-1", None, {}, 200, None),
    ("GET", "/state?episode_id=lane-2", None, {}, 200, None),
    ("GET", f"/state?task_id={TASK}", None, {}, 200, None),
    ("GET", "/state?task_id=", None, {}, 404, "UNKNOWN_TASK"),
    ("GET", "/state", None, {"X-Episode-Id": "lane-1"}, 200, None),
    ("HEAD", f"/state/{TASK}", None, {}, 200, None),  # served as its GET, without the body
    (
        "POST",
        "/step/",
        {"operation": "noop"},
        {},
        422,
        "UNKNOWN_OPERATION",
    ),  # a trailing slash: FastAPI redirects
    (
        "PUT",
        f"/step/{TASK}",
        {"operation": "noop"},
        {},
        405,
        "METHOD_NOT_ALLOWED",
    ),  # 405 from FastAPI
]


def _call(client: TestClient, method: str, path: str, body: object, headers: dict[str, str]):
    if isinstance(body, bytes):
        headers = {**headers, "content-type": "application/json"}
        return client.request(method, path, content=body, headers=headers)
    if body is None:
        return client.request(method, path, headers=headers)
    return client.request(method, path, json=body, headers=headers)


def test_each_call_answers_its_status_and_code(client: TestClient):
    for method, path, body, headers, status, code in CALLS:
        answer = _call(client, method, path, body, headers)
        where = f"{method} {path}"
        assert answer.status_code == status, where
        assert answer.headers["content-type"] == "application/json", where
        if method == "HEAD":
            assert answer.content == b"", where
        elif code is None:
            data = answer.json()
            assert (data if method == "GET" else data["observation"])["task_id"] == TASK, where
        else:
            assert answer.json()["code"] == code, where
    assert _call(client, "PUT", f"/step/{TASK}", {}, {}).headers["allow"] == "POST"


def test_each_episode_url_has_one_code_path(client: TestClient, monkeypatch):
    """The router declares the six URLs once (the docs read the declarations); each matched
    request goes to its declared endpoint through `EpisodeRoutes`, and nothing else to them."""
    assert sorted((r.path, sorted(r.methods)) for r in episodes.router.routes) == [
        ("/reset", ["POST"]),
        ("/reset/{task_id}", ["POST"]),
        ("/state", ["GET"]),
        ("/state/{task_id}", ["GET"]),
        ("/step", ["POST"]),
        ("/step/{task_id}", ["POST"]),
    ]
    handled: list[str] = []
    for route in episodes.router.routes:

        async def counting(request, endpoint=route.endpoint, **ids):
            handled.append(f"{request.method} {request.scope['route'].path} {ids.get('task_id')}")
            return await endpoint(request, **ids)

        monkeypatch.setattr(route, "endpoint", counting)
    assert client.post(f"/reset/{TASK}", json={"episode_id": "hot"}).status_code == 200
    assert client.post(f"/step/{TASK}", json={"operation": "remove_duplicates"}).status_code == 200
    assert client.get("/state", params={"episode_id": "hot"}).status_code == 200
    assert client.get("/health").status_code == 200
    assert client.head(f"/state/{TASK}").status_code == 200  # served as its GET (HeadAsGet)
    assert client.put(f"/step/{TASK}").status_code == 405  # FastAPI's router: not handled
    assert handled == [
        f"POST /reset/{{task_id}} {TASK}",
        f"POST /step/{{task_id}} {TASK}",
        "GET /state None",
        f"GET /state/{{task_id}} {TASK}",
    ]


def test_requests_are_counted_by_route_template(client: TestClient):
    client.post(f"/reset/{TASK}", json={"episode_id": "counted"})
    client.post(f"/step/{TASK}", json={"operation": "remove_duplicates", "episode_id": "counted"})
    client.post("/step", json={"operation": "remove_duplicates", "episode_id": "nope"})
    metrics = client.get("/metrics").text
    assert 'dce_requests_total{method="POST",route="/step/{task_id}",status="200"}' in metrics
    assert 'dce_requests_total{method="POST",route="/reset/{task_id}",status="200"}' in metrics
    assert 'dce_errors_total{route="/step",status="404"}' in metrics
