"""Issue 11: hostile input over REST, /ws and /mcp. Every case checks the answer's status and
code, that the episode it aimed at changed nothing, and that the episode still serves.

The cases are what a probe of the public Space sent (and what was already handled, kept so
it stays handled). None may answer 500 or end a WebSocket session.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings
from tests.support import ok

TASK = "crm"
VICTIM = "victim"
ROW = 350760  # crm seed 0's first contact id
JSON = {"content-type": "application/json"}
SURROGATE_JSON = '"x\\ud800"'  # a JSON string holding a lone surrogate
DEEP = "[" * 100_000 + "]" * 100_000
LONG_INT = "9" * 5000  # past Python's 4300-digit limit on reading an integer
RPC_JSON = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def step_body(operation: str, parameters: str) -> str:
    return f'{{"episode_id": "{VICTIM}", "operation": "{operation}", "parameters": {parameters}}}'


@pytest.fixture
def hostile() -> Iterator[TestClient]:
    with TestClient(create_app(Settings()), raise_server_exceptions=False) as client:
        yield client


def snapshot(client: TestClient) -> tuple[Any, Any]:
    """What a client can see of the victim and of the task's default episode."""
    victim = ok(client.get("/state", params={"episode_id": VICTIM}))
    default = ok(client.get(f"/state/{TASK}"))
    return victim, default


def still_serves(client: TestClient) -> None:
    body = ok(
        client.post(f"/step/{TASK}", json={"operation": "strip"}, params={"episode_id": VICTIM})
    )
    assert body["info"]["episode_id"] == VICTIM
    ok(client.post(f"/step/{TASK}", json={"operation": "strip"}))  # the default episode too


# (name, method, path, request kwargs, status, code)
REST_CASES: list[tuple[str, str, str, dict[str, Any], int, str]] = [
    # defect 1: lone surrogates, through each operation that stores client text
    (
        "set_cell surrogate",
        "POST",
        f"/step/{TASK}",
        {
            "content": step_body(
                "set_cell", f'{{"row_id": {ROW}, "column": "email", "value": {SURROGATE_JSON}}}'
            ),
            "headers": JSON,
        },
        422,
        "INVALID_TEXT",
    ),
    (
        "map surrogate",
        "POST",
        f"/step/{TASK}",
        {
            "content": step_body(
                "map",
                f'{{"column": "full_name", "mapping": {{" SARA M\\u00dcLLER": {SURROGATE_JSON}}}}}',
            ),
            "headers": JSON,
        },
        422,
        "INVALID_TEXT",
    ),
    (
        "surrogate as raw UTF-8 bytes",
        "POST",
        f"/step/{TASK}",
        {
            "content": step_body("set_cell", '{"row_id": 350760, "column": "email", "value": "x@"}')
            .encode()
            .replace(b"@", b"\xed\xa0\x80"),
            "headers": JSON,
        },
        422,
        "INVALID_TEXT",
    ),
    (
        "surrogate in a program",
        "POST",
        "/step",
        {
            "content": step_body(
                "program",
                f'{{"operations": [{{"operation": "set_cell", "parameters": {{"row_id": {ROW}, "column": "email", "value": {SURROGATE_JSON}}}}}]}}',
            ),
            "headers": JSON,
        },
        422,
        "INVALID_TEXT",
    ),
    (
        "surrogate operation name",
        "POST",
        f"/step/{TASK}",
        {"content": step_body("x\\udfff", "{}"), "headers": JSON},
        422,
        "INVALID_TEXT",
    ),
    (
        "surrogate task id in a reset body",
        "POST",
        "/reset",
        {"content": f'{{"task_id": {SURROGATE_JSON}}}', "headers": JSON},
        422,
        "INVALID_TEXT",
    ),
    # defect 5: sizes
    (
        "900 kB cell",
        "POST",
        f"/step/{TASK}",
        {
            "json": {
                "episode_id": VICTIM,
                "operation": "set_cell",
                "parameters": {"row_id": ROW, "column": "email", "value": "x" * 900_000},
            }
        },
        422,
        "TOO_LARGE",
    ),
    (
        "1,001-character cell",
        "POST",
        f"/step/{TASK}",
        {
            "json": {
                "episode_id": VICTIM,
                "operation": "set_cell",
                "parameters": {"row_id": ROW, "column": "email", "value": "x" * 1001},
            }
        },
        422,
        "TOO_LARGE",
    ),
    (
        "regex that multiplies every character",
        "POST",
        f"/step/{TASK}",
        {
            "json": {
                "episode_id": VICTIM,
                "operation": "regex_replace",
                "parameters": {"column": "email", "pattern": ".", "replacement": "y" * 200},
            }
        },
        422,
        "TOO_LARGE",
    ),
    # defect 6: body limit
    (
        "2 MB body",
        "POST",
        f"/step/{TASK}",
        {"content": b"{" + b" " * 2_000_000 + b"}", "headers": JSON},
        413,
        "BODY_TOO_LARGE",
    ),
    # defect 7: ids
    (
        "id of another task's episode",
        "POST",
        "/step/easy_dedup_rename",
        {"json": {"operation": "finish"}, "params": {"episode_id": VICTIM}},
        404,
        "UNKNOWN_EPISODE",
    ),
    (
        "reset taking over a server-issued id",
        "POST",
        f"/reset/{TASK}",
        {"json": {"episode_id": "dce:anything"}},
        422,
        "INVALID_ACTION",
    ),
    (
        "60 kB episode id header",
        "GET",
        "/state",
        {"headers": {"X-Episode-Id": "a" * 60_000}},
        422,
        "INVALID_ACTION",
    ),
    ("60 kB task id in the path", "GET", "/state/" + "t" * 60_000, {}, 404, "UNKNOWN_TASK"),
    # defect 8: browsers of other sites, non-JSON bodies
    (
        "text/plain body (a cross-site form or fetch)",
        "POST",
        f"/step/{TASK}",
        {"content": json.dumps({"operation": "finish"}), "headers": {"content-type": "text/plain"}},
        415,
        "UNSUPPORTED_MEDIA_TYPE",
    ),
    (
        "form body",
        "POST",
        f"/reset/{TASK}",
        {"content": "a=1", "headers": {"content-type": "application/x-www-form-urlencoded"}},
        415,
        "UNSUPPORTED_MEDIA_TYPE",
    ),
    (
        "empty reset from a foreign origin",
        "POST",
        f"/reset/{TASK}",
        {"headers": {"origin": "https://evil.example"}},
        403,
        "ORIGIN_NOT_ALLOWED",
    ),
    (
        "step from a foreign origin",
        "POST",
        f"/step/{TASK}",
        {"json": {"operation": "finish"}, "headers": {"origin": "https://evil.example"}},
        403,
        "ORIGIN_NOT_ALLOWED",
    ),
    (
        "preflight from a foreign origin",
        "OPTIONS",
        f"/step/{TASK}",
        {"headers": {"origin": "https://evil.example", "access-control-request-method": "POST"}},
        405,
        "METHOD_NOT_ALLOWED",
    ),
    # already handled before issue 11: kept handled
    (
        "invalid JSON",
        "POST",
        f"/step/{TASK}",
        {"content": "{nope", "headers": JSON},
        422,
        "INVALID_JSON",
    ),
    (
        "100k-deep JSON",
        "POST",
        f"/step/{TASK}",
        {"content": DEEP, "headers": JSON},
        422,
        "INVALID_JSON",
    ),
    (
        "JSON array body",
        "POST",
        f"/step/{TASK}",
        {"content": "[1, 2]", "headers": JSON},
        422,
        "INVALID_ACTION",
    ),
    (
        "integer past 4300 digits",
        "POST",
        f"/step/{TASK}",
        {"content": '{"operation": "finish", "x": ' + "9" * 5000 + "}", "headers": JSON},
        422,
        "INVALID_JSON",
    ),
    (
        "unknown operation",
        "POST",
        f"/step/{TASK}",
        {"json": {"episode_id": VICTIM, "operation": "rm_rf"}},
        422,
        "UNKNOWN_OPERATION",
    ),
    (
        "unknown column",
        "POST",
        f"/step/{TASK}",
        {"json": {"episode_id": VICTIM, "operation": "strip", "parameters": {"column": "nope"}}},
        422,
        "INVALID_PARAMETERS",
    ),
    (
        "NaN cell value (not JSON)",
        "POST",
        f"/step/{TASK}",
        {
            "content": step_body(
                "set_cell", f'{{"row_id": {ROW}, "column": "email", "value": NaN}}'
            ),
            "headers": JSON,
        },
        422,
        "INVALID_JSON",
    ),
    ("unknown task", "POST", "/step/nope", {"json": {"operation": "finish"}}, 404, "UNKNOWN_TASK"),
]


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "code"),
    [case[1:] for case in REST_CASES],
    ids=[case[0] for case in REST_CASES],
)
def test_rest_hostile_input(
    hostile: TestClient, method: str, path: str, kwargs: dict[str, Any], status: int, code: str
) -> None:
    ok(hostile.post(f"/reset/{TASK}", json={"seed": 0, "episode_id": VICTIM}))
    ok(hostile.post(f"/reset/{TASK}", json={"seed": 0}))
    before = snapshot(hostile)
    response = hostile.request(method, path, **kwargs)
    assert response.status_code == status, response.text
    body = response.json()
    # (a refused operation also names the task's operations and the nearest)
    assert {"detail", "code"} <= set(body) <= {"detail", "code", "allowed", "did_you_mean"}
    assert body["code"] == code
    assert len(response.content) < 2_000  # nothing long is echoed back
    assert snapshot(hostile) == before  # a refused request changed nothing
    still_serves(hostile)


def test_catastrophic_pattern_on_matching_cells_is_refused_in_time(hostile: TestClient) -> None:
    """20 cells of "a"*350+"!" and `(a|aa)+$`, over REST.

    The pattern must be catastrophic for the `regex` module itself, whatever the machine:
    `(a|aa)+$` backtracks through every split of 350 a's into ones and twos (about 10**73
    of them), so the per-cell limit fires on the first cell on any machine, however fast.
    (`(a+)+$` is not: `regex` matches it in polynomial time, so it only timed out when the
    machine was slow.) A refused step is never remembered, so the program of 20 is computed
    and refused too, whatever ran before."""
    ok(hostile.post(f"/reset/{TASK}", json={"seed": 0, "episode_id": VICTIM}))
    rows = [
        r["contact_id"]
        for r in ok(
            hostile.post(
                f"/step/{TASK}",
                json={"operation": "show_rows", "parameters": {"limit": 20}},
                params={"episode_id": VICTIM},
            )
        )["observation"]["sample_rows"]
    ]
    plant = [
        {
            "operation": "set_cell",
            "parameters": {"row_id": r, "column": "full_name", "value": "a" * 350 + "!"},
        }
        for r in rows
    ]
    ok(
        hostile.post(
            f"/step/{TASK}",
            json={"operation": "program", "parameters": {"operations": plant}},
            params={"episode_id": VICTIM},
        )
    )
    before = snapshot(hostile)
    redos = {
        "operation": "regex_replace",
        "parameters": {"column": "full_name", "pattern": "(a|aa)+$", "replacement": "x"},
    }
    for action in (redos, {"operation": "program", "parameters": {"operations": [redos] * 20}}):
        response = hostile.post(f"/step/{TASK}", json=action, params={"episode_id": VICTIM})
        assert response.status_code == 422 and response.json()["code"] == "STEP_TIME_LIMIT"
        assert snapshot(hostile) == before
    still_serves(hostile)


# ── /ws ──────────────────────────────────────────────────────────────────────

WS_CASES: list[tuple[str, Any, str]] = [
    ("binary frame", b"\x00\x01binary", "INVALID_JSON"),
    ("surrogate message type", '{"type": "x\\ud800"}', "INVALID_TEXT"),
    (
        "surrogate in a step",
        '{"type": "step", "data": {"operation": "set_cell", "parameters": {"row_id": 350760, "column": "email", "value": "x\\ud800"}}}',
        "INVALID_TEXT",
    ),
    ("100k-deep frame", DEEP, "INVALID_JSON"),
    (
        "integer past 4300 digits in a step",
        '{"type": "step", "data": {"operation": "strip", "parameters": {"x": ' + LONG_INT + "}}}",
        "INVALID_JSON",
    ),
    (
        "integer past 4300 digits in a reset",
        '{"type": "reset", "data": {"seed": ' + LONG_INT + "}}",
        "INVALID_JSON",
    ),
    ("JSON that is not an object", "[1, 2, 3]", "INVALID_JSON"),
    ("invalid JSON", "{nope", "INVALID_JSON"),
    ("unknown frame type", '{"type": "launch"}', "UNKNOWN_TYPE"),
    (
        "reset with an id of the server's namespace",  # as REST refuses it: no id twice
        '{"type": "reset", "data": {"episode_id": "dce:xewnpNx1RCqsbHjdXZSPTQ"}}',
        "INVALID_ACTION",  # REST's code for it (tests/e2e/test_ws_rest_codes.py)
    ),
    (
        "step that is not an action",
        '{"type": "step", "data": {"operation": 5}}',
        "INVALID_ACTION",
    ),
]


@pytest.mark.parametrize(("frame", "code"), [c[1:] for c in WS_CASES], ids=[c[0] for c in WS_CASES])
def test_ws_hostile_frames_get_an_error_frame_and_the_session_goes_on(
    hostile: TestClient, frame: Any, code: str
) -> None:
    with hostile.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task_id": TASK, "seed": 0}})
        assert ws.receive_json()["type"] == "observation"
        ws.send_json({"type": "state"})
        before = ws.receive_json()
        if isinstance(frame, bytes):
            ws.send_bytes(frame)
        else:
            ws.send_text(frame)
        answer = ws.receive_json()
        assert answer["type"] == "error" and answer["data"]["code"] == code, answer
        ws.send_json({"type": "state"})
        assert ws.receive_json() == before  # nothing changed
        ws.send_json({"type": "step", "data": {"operation": "strip"}})
        step = ws.receive_json()
        assert step["type"] == "observation" and step["data"]["observation"]["step"] == 1


def test_ws_refused_action_leaves_the_episode_unchanged(hostile: TestClient) -> None:
    with hostile.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task_id": TASK, "seed": 0}})
        first = ws.receive_json()["data"]
        ws.send_json(
            {
                "type": "step",
                "data": {
                    "operation": "set_cell",
                    "parameters": {"row_id": ROW, "column": "email", "value": "x" * 5000},
                },
            }
        )
        refused = ws.receive_json()["data"]
        assert refused["observation"]["info"]["error"]["code"] == "TOO_LARGE"
        assert refused["observation"]["sample_rows"] == first["observation"]["sample_rows"]
        assert refused["observation"]["step"] == 0 and refused["reward"] == 0


# ── /mcp and OpenEnv's other POST routes ───────────────────────────────────────

MCP_CASES: list[tuple[str, dict[str, Any], int, str]] = [
    (
        "surrogate method name",
        {"content": '{"jsonrpc": "2.0", "id": 1, "method": "x\\ud800"}', "headers": JSON},
        422,
        "INVALID_TEXT",
    ),
    (
        "surrogate in params",
        {
            "content": '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"k": "x\\udc00"}}',
            "headers": JSON,
        },
        422,
        "INVALID_TEXT",
    ),
    ("2 MB body", {"content": b" " * 2_000_000, "headers": JSON}, 413, "BODY_TOO_LARGE"),
    (
        "text/plain body",
        {
            "content": '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
            "headers": {"content-type": "text/plain"},
        },
        415,
        "UNSUPPORTED_MEDIA_TYPE",
    ),
    (
        "foreign origin",
        {
            "json": {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"},
            "headers": {"origin": "http://evil.example"},
        },
        403,
        "ORIGIN_NOT_ALLOWED",
    ),
]


@pytest.mark.parametrize(
    ("kwargs", "status", "code"), [c[1:] for c in MCP_CASES], ids=[c[0] for c in MCP_CASES]
)
def test_mcp_hostile_input(
    hostile: TestClient, kwargs: dict[str, Any], status: int, code: str
) -> None:
    ok(hostile.post(f"/reset/{TASK}", json={"seed": 0, "episode_id": VICTIM}))
    ok(hostile.post(f"/reset/{TASK}", json={"seed": 0}))
    before = snapshot(hostile)
    sessions = hostile.app.state.openenv.active_sessions
    response = hostile.post("/mcp", **kwargs)
    assert response.status_code == status, response.text
    assert response.json()["code"] == code
    assert snapshot(hostile) == before
    assert hostile.app.state.openenv.active_sessions == sessions
    mcp = ok(hostile.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    assert mcp["jsonrpc"] == "2.0"
    still_serves(hostile)


@pytest.mark.parametrize("session_id", [["x"], {"a": 1}], ids=["list", "object"])
@pytest.mark.parametrize("method", ["tools/list", "tools/call", "openenv/session/close"])
def test_mcp_session_id_that_is_not_text_is_invalid_params(
    hostile: TestClient, method: str, session_id: Any
) -> None:
    """OpenEnv's JSON-RPC on POST /mcp answers an unknown session id with INVALID_PARAMS;
    an id that is not text gets the same, not a 500."""
    request = {"jsonrpc": "2.0", "id": 7, "method": method, "params": {"session_id": session_id}}
    response = hostile.post("/mcp", json=request)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32602, "message": "Invalid params - 'session_id' must be text"},
    }
    assert hostile.app.state.openenv.active_sessions == 0
    ok(hostile.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))


@pytest.mark.parametrize(
    "params",
    [b'{"x": ' + LONG_INT.encode() + b"}", b"[" * 20_000 + b"]" * 20_000, b'{"x": "\xff"}'],
    ids=["long int", "deep", "not UTF-8"],
)
def test_mcp_transport_answers_unreadable_json_with_a_parse_error(
    hostile: TestClient, params: bytes
) -> None:
    """FastMCP's transport answers JSON it cannot decode with 400 and PARSE_ERROR; JSON that
    Python cannot read (a 5000-digit integer, deep nesting, bad UTF-8) gets the same, not a
    500."""
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ' + params + b"}"
    response = hostile.post("/mcp", content=body, headers=RPC_JSON)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == -32700
    assert response.json()["error"]["message"].startswith("Parse error: ")
    assert len(response.content) < 2_000
    assert hostile.app.state.openenv.active_sessions == 0


def test_mcp_transport_refuses_text_that_is_not_unicode(hostile: TestClient) -> None:
    """A lone surrogate (here the request's id) could never be written back: the transport's
    stream failed to encode its answer and sent an empty 200. Refused as OpenEnv's JSON-RPC
    route refuses it."""
    body = '{"jsonrpc": "2.0", "id": "\\ud800", "method": "initialize", "params": {}}'
    response = hostile.post("/mcp", content=body, headers=RPC_JSON)
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "INVALID_TEXT"
    assert hostile.app.state.openenv.active_sessions == 0


def test_mcp_over_a_websocket_is_refused_and_holds_no_session(hostile: TestClient) -> None:
    """OpenEnv's WebSocket /mcp would hold a session whose environment serves no MCP method
    (the tools are on POST /mcp): the socket is told so and closed, and takes no session."""
    with hostile.websocket_connect("/mcp") as ws:
        frame = ws.receive_json()
        assert frame["jsonrpc"] == "2.0" and frame["id"] is None
        assert frame["error"]["code"] == -32601
        assert "POST /mcp" in frame["error"]["message"]
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 1008
    assert hostile.app.state.openenv.active_sessions == 0


def test_openenv_task_routes_share_the_limits(hostile: TestClient) -> None:
    too_big = hostile.post("/data-cleaning-openenv/task", content=b" " * 2_000_000, headers=JSON)
    assert too_big.status_code == 413 and too_big.json()["code"] == "BODY_TOO_LARGE"
    bad_text = hostile.post(
        "/data-cleaning-openenv/task", content='{"split": "x\\ud800", "index": 0}', headers=JSON
    )
    assert bad_text.status_code == 422 and bad_text.json()["code"] == "INVALID_TEXT"
    fine = ok(hostile.post("/data-cleaning-openenv/task", json={"split": "eval", "index": 0}))
    assert fine["task"]["split"] == "eval"


# ── origins ────────────────────────────────────────────────────────────────────


def test_same_origin_and_listed_origins_are_served() -> None:
    settings = Settings(cors_origins="https://ok.example")
    with TestClient(create_app(settings)) as client:
        same = client.post(f"/reset/{TASK}", headers={"origin": "http://testserver"})
        assert same.status_code == 200
        listed = client.post(f"/reset/{TASK}", headers={"origin": "https://ok.example"})
        assert listed.status_code == 200
        assert listed.headers["access-control-allow-origin"] == "https://ok.example"
        preflight = client.options(
            f"/step/{TASK}",
            headers={
                "origin": "https://ok.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type",
            },
        )
        assert preflight.status_code == 200
        other = client.post(f"/reset/{TASK}", headers={"origin": "https://evil.example"})
        assert other.status_code == 403 and "access-control-allow-origin" not in other.headers


def test_ws_from_a_foreign_origin_is_refused(hostile: TestClient) -> None:
    with hostile.websocket_connect("/ws", headers={"origin": "https://evil.example"}) as ws:
        frame = ws.receive_json()
        assert frame["type"] == "error" and frame["data"]["code"] == "ORIGIN_NOT_ALLOWED"
    assert hostile.app.state.openenv.active_sessions == 0
