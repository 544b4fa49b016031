"""Every "Try it out" of /docs succeeds as Swagger UI generates it: for each operation of the
live server's /openapi.json, in the document's order (as a person reads the page), the
request Swagger UI builds (a path parameter's `example`, a body's media-type `example`, no
optional parameter) is sent to a real uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from dataclean_env.settings import Settings
from tests.web import LiveServer

# Operations whose example cannot succeed on its own, with the exact answer it gets.
NEEDS_STATE = {
    # A run's id is drawn by POST /leaderboard/runs: no example can name one.
    ("get", "/leaderboard/runs/{run_id}"): (404, "UNKNOWN_RUN"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer(Settings(openenv_mount="eager")) as live:
        yield live


def swagger_request(path: str, operation: dict[str, Any]) -> tuple[str, dict[str, str], Any]:
    """The URL, headers and body Swagger UI sends after "Try it out" and "Execute" without
    typing anything: path parameters and the body filled from their examples."""
    url = path
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            assert "example" in parameter, f"{path}: path parameter {parameter['name']}"
            url = url.replace("{" + parameter["name"] + "}", str(parameter["example"]))
        else:  # Swagger UI leaves optional parameters out; none is required
            assert not parameter.get("required"), f"{path}: {parameter['name']}"
    content = operation.get("requestBody", {}).get("content", {})
    if not content:
        return url, {}, None
    assert list(content) == ["application/json"], path
    media = content["application/json"]
    assert "example" in media, f"{path}: the body has no example"
    return url, {"content-type": "application/json"}, media["example"]


def test_every_operation_succeeds_with_its_generated_example(server: LiveServer) -> None:
    document = httpx.get(f"{server.url}/openapi.json", timeout=30).json()
    answers: dict[tuple[str, str], tuple[int, str | None]] = {}
    with httpx.Client(base_url=server.url, timeout=120) as client:
        for path, methods in document["paths"].items():
            for method, operation in methods.items():
                url, headers, body = swagger_request(path, operation)
                content = None if body is None else json.dumps(body)
                response = client.request(method, url, headers=headers, content=content)
                code = None
                if response.headers.get("content-type") == "application/json":
                    code = response.json().get("code") if response.is_client_error else None
                answers[method, path] = (response.status_code, code)
    failed = {
        key: answer
        for key, answer in answers.items()
        if answer != NEEDS_STATE.get(key) and not 200 <= answer[0] < 300
    }
    assert failed == {}
    assert {key: answers[key] for key in NEEDS_STATE} == NEEDS_STATE
    assert len(answers) == sum(len(methods) for methods in document["paths"].values())


def test_the_reset_example_names_a_seed_json_can_carry(server: LiveServer) -> None:
    """The issue's case: the seed's bound (2**63) is past what a browser's number holds
    exactly, so a generated seed came out 9223372036854776000 and was refused."""
    operation = httpx.get(f"{server.url}/openapi.json", timeout=30).json()["paths"][
        "/reset/{task_id}"
    ]["post"]
    url, _, body = swagger_request("/reset/{task_id}", operation)
    assert (url, body) == ("/reset/easy_dedup_rename", {"seed": 7, "episode_id": "my-run-1"})
    response = httpx.post(f"{server.url}{url}", json=body, timeout=60)
    assert response.status_code == 200
    assert response.json()["observation"]["episode_id"] == "my-run-1"
