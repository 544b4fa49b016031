"""The same bad input gets the same `code` on /ws as on REST: a /ws client can act on a
refusal as a REST client does. Real HTTP and a real WebSocket against one live uvicorn."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from tests.web import LiveServer

pytestmark = pytest.mark.e2e

TASK = "easy_dedup_rename"
# (what is wrong, the reset's options, the code both doors answer with)
RESETS: list[tuple[str, dict[str, Any], str]] = [
    ("unknown task", {"task_id": "nope"}, "UNKNOWN_TASK"),
    ("negative seed", {"task_id": TASK, "seed": -1}, "INVALID_ACTION"),
    ("seed of text", {"task_id": TASK, "seed": "x"}, "INVALID_ACTION"),
    ("seed of 2**63", {"task_id": TASK, "seed": 2**63}, "INVALID_ACTION"),
    ("fractional seed", {"task_id": TASK, "seed": 1.5}, "INVALID_ACTION"),
    ("unknown split", {"task_id": TASK, "split": "bogus"}, "INVALID_ACTION"),
    ("unknown reward mode", {"task_id": TASK, "reward_mode": "bogus"}, "INVALID_ACTION"),
    ("unknown option", {"task_id": TASK, "colour": "red"}, "INVALID_ACTION"),
    ("episode id of the server's", {"episode_id": "dce:xewnpNx1RCqsbHjdXZSPTQ"}, "INVALID_ACTION"),
]
# (what is wrong, the step's action, the code both doors answer with)
STEPS: list[tuple[str, dict[str, Any], str]] = [
    ("no operation", {"parameters": {}}, "INVALID_ACTION"),
    ("operation not text", {"operation": 5}, "INVALID_ACTION"),
    ("parameters not an object", {"operation": "finish", "parameters": []}, "INVALID_ACTION"),
    ("unknown field", {"operation": "finish", "parameters": {}, "bogus": 1}, "INVALID_ACTION"),
    ("unknown operation", {"operation": "nope"}, "UNKNOWN_OPERATION"),
    (
        "bad parameters",
        {"operation": "fix_dtype", "parameters": {"column": 5}},
        "INVALID_PARAMETERS",
    ),
]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


def ws_code(server: LiveServer, frames: list[dict[str, Any]]) -> str:
    """The code of the last frame's answer: an error frame's, or the refused step's."""
    with connect(f"ws://127.0.0.1:{server.port}/ws", open_timeout=120) as ws:
        for frame in frames:
            ws.send(json.dumps(frame))
            answer = json.loads(ws.recv(timeout=120))
    if answer["type"] == "error":
        return str(answer["data"]["code"])
    return str(answer["data"]["observation"]["info"]["error"]["code"])


@pytest.mark.parametrize(("options", "code"), [c[1:] for c in RESETS], ids=[c[0] for c in RESETS])
def test_a_refused_reset_has_one_code_on_both_doors(
    server: LiveServer, options: dict[str, Any], code: str
) -> None:
    rest = httpx.post(f"{server.url}/reset", json=options, timeout=120)
    assert (rest.status_code // 100, rest.json()["code"]) == (4, code)
    assert ws_code(server, [{"type": "reset", "data": options}]) == code


@pytest.mark.parametrize(("action", "code"), [c[1:] for c in STEPS], ids=[c[0] for c in STEPS])
def test_a_refused_step_has_one_code_on_both_doors(
    server: LiveServer, action: dict[str, Any], code: str
) -> None:
    reset = httpx.post(f"{server.url}/reset", json={"task_id": TASK}, timeout=120).json()
    body = {"episode_id": reset["observation"]["episode_id"], **action}
    rest = httpx.post(f"{server.url}/step", json=body, timeout=120)
    assert (rest.status_code, rest.json()["code"]) == (422, code)
    frames = [{"type": "reset", "data": {"task_id": TASK}}, {"type": "step", "data": action}]
    assert ws_code(server, frames) == code


def test_text_that_is_not_unicode_has_one_code_on_both_doors(server: LiveServer) -> None:
    step = '{"operation": "rename_column", "parameters": {"old": "a", "new": "x\\ud800"}}'
    reset = httpx.post(f"{server.url}/reset", json={"task_id": TASK}, timeout=120).json()
    episode = reset["observation"]["episode_id"]
    body = step.replace("{", f'{{"episode_id": "{episode}", ', 1)
    rest = httpx.post(
        f"{server.url}/step", content=body, headers={"content-type": "application/json"}
    )
    assert (rest.status_code, rest.json()["code"]) == (422, "INVALID_TEXT")
    with connect(f"ws://127.0.0.1:{server.port}/ws", open_timeout=120) as ws:
        ws.send(f'{{"type": "step", "data": {step}}}')
        assert json.loads(ws.recv(timeout=120))["data"]["code"] == "INVALID_TEXT"
