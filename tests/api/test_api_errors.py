"""Error answers: 4xx with {"detail": str, "code": str}, and a refused step changes nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings
from tests.support import ALL_TASK_IDS, TABLE_FIELDS, TASK_IDS

# A real, table-changing first step per task, so that "unchanged" has something to keep.
WARMUP = {
    "easy_dedup_rename": {"operation": "remove_duplicates"},
    "medium_missing_dtype": {"operation": "fill_missing_mean"},
    "hard_full_pipeline": {"operation": "remove_duplicates"},
    "expert_sales_pipeline": {"operation": "remove_duplicates"},
}


ERROR_KEYS = {"detail", "code"}
# A refused operation also says which ones the task has, and the nearest.
REFUSAL_KEYS = ERROR_KEYS | {"allowed", "did_you_mean"}


def assert_error(response, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert ERROR_KEYS <= set(body) <= REFUSAL_KEYS
    assert isinstance(body["detail"], str) and body["detail"]
    assert isinstance(body["code"], str) and body["code"]
    if code is not None:
        assert body["code"] == code, body
    return body


def state_of(client: TestClient, episode_id: str) -> dict[str, Any]:
    response = client.get("/state", params={"episode_id": episode_id})
    assert response.status_code == 200, response.text
    return response.json()


def start(client: TestClient, task_id: str, episode_id: str) -> dict[str, Any]:
    """A fresh episode with one accepted step; returns that step's result."""
    assert client.post(f"/reset/{task_id}", json={"episode_id": episode_id}).status_code == 200
    response = client.post(
        f"/step/{task_id}", json=WARMUP[task_id], params={"episode_id": episode_id}
    )
    assert response.status_code == 200, response.text
    return response.json()


def table_view(observation: dict[str, Any]) -> dict[str, Any]:
    return {field: observation[field] for field in TABLE_FIELDS}


def assert_still_serves(
    client: TestClient, task_id: str, episode_id: str, before: dict[str, Any], warm: dict
) -> None:
    """State unchanged, and a valid (table-neutral) step is step 2 on the unchanged table."""
    assert state_of(client, episode_id) == before
    response = client.post(
        f"/step/{task_id}", json={"operation": "validate_schema"}, params={"episode_id": episode_id}
    )
    assert response.status_code == 200, response.text
    after = response.json()
    assert after["observation"]["step"] == before["step_count"] + 1
    assert table_view(after["observation"]) == table_view(warm["observation"])
    assert [h["operation"] for h in state_of(client, episode_id)["history"]] == [
        h["operation"] for h in before["history"]
    ] + ["validate_schema"]


# ── refused steps: (task, body, status, code) ────────────────────────────────

REFUSALS: dict[str, tuple[str, Any, int, str]] = {
    "unknown_op": ("medium_missing_dtype", {"operation": "explode"}, 422, "UNKNOWN_OPERATION"),
    "unknown_alias": (
        "medium_missing_dtype",
        {"operation": "fill_missing_magic"},
        422,
        "UNKNOWN_OPERATION",
    ),
    "op_not_allowed": (
        "easy_dedup_rename",
        {"operation": "remove_outliers"},
        422,
        "OPERATION_NOT_ALLOWED",
    ),
    "op_not_allowed_with_params": (
        "easy_dedup_rename",
        {"operation": "remove_outliers", "parameters": {"method": "iqr", "column": "AGE"}},
        422,
        "OPERATION_NOT_ALLOWED",
    ),
    "unknown_column": (
        "medium_missing_dtype",
        {"operation": "fill_missing", "parameters": {"strategy": "mode", "column": "nope"}},
        422,
        "INVALID_PARAMETERS",
    ),
    "bad_strategy": (
        "medium_missing_dtype",
        {"operation": "fill_missing", "parameters": {"strategy": "magic"}},
        422,
        "INVALID_PARAMETERS",
    ),
    "column_is_int": (
        "medium_missing_dtype",
        {"operation": "fill_missing", "parameters": {"strategy": "mode", "column": 5}},
        422,
        "INVALID_PARAMETERS",
    ),
    "unexpected_key": (
        "medium_missing_dtype",
        {"operation": "fill_missing", "parameters": {"strategy": "mode", "colour": "red"}},
        422,
        "INVALID_PARAMETERS",
    ),
    "constant_without_value": (
        "medium_missing_dtype",
        {"operation": "fill_missing", "parameters": {"strategy": "constant"}},
        422,
        "INVALID_PARAMETERS",
    ),
    "value_without_constant": (
        "medium_missing_dtype",
        {"operation": "fill_missing", "parameters": {"strategy": "mode", "value": 3}},
        422,
        "INVALID_PARAMETERS",
    ),
    "alias_contradicted": (
        "medium_missing_dtype",
        {"operation": "fill_missing_mean", "parameters": {"strategy": "median"}},
        422,
        "INVALID_PARAMETERS",
    ),
    "bad_dtype": (
        "medium_missing_dtype",
        {"operation": "fix_dtype", "parameters": {"dtype": "complex"}},
        422,
        "INVALID_PARAMETERS",
    ),
    "threshold_negative": (
        "hard_full_pipeline",
        {"operation": "remove_outliers", "parameters": {"threshold": -1.0}},
        422,
        "INVALID_PARAMETERS",
    ),
    "threshold_text": (
        "hard_full_pipeline",
        {"operation": "remove_outliers", "parameters": {"threshold": "1.5"}},
        422,
        "INVALID_PARAMETERS",
    ),
    "subset_unknown_column": (
        "hard_full_pipeline",
        {"operation": "remove_duplicates", "parameters": {"subset": ["nope"]}},
        422,
        "INVALID_PARAMETERS",
    ),
    "rename_unknown_column": (
        "easy_dedup_rename",
        {"operation": "rename_columns", "parameters": {"mapping": {"nope": "x"}}},
        422,
        "INVALID_PARAMETERS",
    ),
    "rename_clash": (
        "easy_dedup_rename",
        {"operation": "rename_columns", "parameters": {"mapping": {"EMP ID": "AGE"}}},
        422,
        "INVALID_PARAMETERS",
    ),
    "rename_mapping_text": (
        "easy_dedup_rename",
        {"operation": "rename_columns", "parameters": {"mapping": "snake"}},
        422,
        "INVALID_PARAMETERS",
    ),
    "finish_with_params": (
        "easy_dedup_rename",
        {"operation": "finish", "parameters": {"force": True}},
        422,
        "INVALID_PARAMETERS",
    ),
    "outliers_on_text": (
        "hard_full_pipeline",
        {"operation": "remove_outliers", "parameters": {"column": "product"}},
        422,
        "OPERATION_FAILED",
    ),
    "lossy_int_cast": (
        "hard_full_pipeline",
        {"operation": "fix_dtype", "parameters": {"dtype": "int", "column": "price"}},
        422,
        "OPERATION_FAILED",
    ),
    "not_json": ("medium_missing_dtype", b"operation=finish", 422, "INVALID_JSON"),
    "json_array": ("medium_missing_dtype", b'[{"operation": "finish"}]', 422, "INVALID_ACTION"),
    "json_string": ("medium_missing_dtype", b'"finish"', 422, "INVALID_ACTION"),
    "not_utf8": ("medium_missing_dtype", b"\xff\xfe{}", 422, "INVALID_JSON"),
    "empty_object": ("medium_missing_dtype", {}, 422, "INVALID_ACTION"),
    "missing_operation": (
        "medium_missing_dtype",
        {"parameters": {"strategy": "mean"}},
        422,
        "INVALID_ACTION",
    ),
    "parameters_list": (
        "medium_missing_dtype",
        {"operation": "fill_missing", "parameters": ["mean"]},
        422,
        "INVALID_ACTION",
    ),
    "parameters_text": (
        "medium_missing_dtype",
        {"operation": "fill_missing", "parameters": "mean"},
        422,
        "INVALID_ACTION",
    ),
    "operation_int": ("medium_missing_dtype", {"operation": 5}, 422, "INVALID_ACTION"),
    "operation_empty": ("medium_missing_dtype", {"operation": ""}, 422, "INVALID_ACTION"),
    "two_spellings": (
        "medium_missing_dtype",
        {"operation": "finish", "name": "finish"},
        422,
        "INVALID_ACTION",
    ),
    "extra_envelope_field": (
        "medium_missing_dtype",
        {"operation": "finish", "note": "x"},
        422,
        "INVALID_ACTION",
    ),
    "action_text": ("medium_missing_dtype", {"action": "finish"}, 422, "INVALID_ACTION"),
    "action_and_operation": (
        "medium_missing_dtype",
        {"action": {"operation": "finish"}, "operation": "finish"},
        422,
        "INVALID_ACTION",
    ),
    # It reached the operation (here, with no cell left to fill: taken, 200; else pandas'
    # OverflowError, 422 OPERATION_FAILED and a traceback logged: tests/unit/engine).
    "parameter_int_past_a_float": (
        "medium_missing_dtype",
        {
            "operation": "fill_missing",
            "parameters": {"strategy": "constant", "column": "age", "value": 10**999},
        },
        422,
        "INVALID_PARAMETERS",
    ),
    "episode_id_int": (
        "medium_missing_dtype",
        {"operation": "finish", "episode_id": 5},
        422,
        "INVALID_ACTION",
    ),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refused_step_leaves_episode_unchanged(client: TestClient, case: str) -> None:
    task_id, body, status, code = REFUSALS[case]
    episode_id = f"refused-{case}"
    warm = start(client, task_id, episode_id)
    before = state_of(client, episode_id)
    assert before["step_count"] == 1
    if isinstance(body, bytes):
        response = client.post(
            f"/step/{task_id}",
            content=body,
            headers={"content-type": "application/json", "X-Episode-Id": episode_id},
        )
    else:
        response = client.post(f"/step/{task_id}", json=body, headers={"X-Episode-Id": episode_id})
    assert_error(response, status, code)
    assert_still_serves(client, task_id, episode_id, before, warm)


def test_refused_step_on_default_episode(client: TestClient) -> None:
    task_id = "medium_missing_dtype"
    assert client.post(f"/reset/{task_id}").status_code == 200
    warm = client.post(f"/step/{task_id}", json=WARMUP[task_id]).json()
    before = client.get(f"/state/{task_id}").json()
    assert_error(
        client.post(f"/step/{task_id}", json={"operation": "fill_missing", "parameters": {"x": 1}}),
        422,
        "INVALID_PARAMETERS",
    )
    assert client.get(f"/state/{task_id}").json() == before
    assert_still_serves(client, task_id, before["episode_id"], before, warm)


# ── unknown task / episode, mismatch, finished ───────────────────────────────


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/reset/no_such_task", None),
        ("POST", "/reset", {"task_id": "no_such_task"}),
        ("POST", "/step/no_such_task", {"operation": "finish"}),
        ("POST", "/step", {"task_id": "no_such_task", "operation": "finish"}),
        ("GET", "/state/no_such_task", None),
        ("GET", "/state?task_id=no_such_task", None),
    ],
)
def test_unknown_task(client: TestClient, method: str, path: str, body: Any) -> None:
    body_error = assert_error(client.request(method, path, json=body), 404, "UNKNOWN_TASK")
    assert "no_such_task" in body_error["detail"]


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("POST", "/step/medium_missing_dtype", {"params": {"episode_id": "ghost-1"}}),
        ("POST", "/step/medium_missing_dtype", {"headers": {"X-Episode-Id": "ghost-1"}}),
        ("POST", "/step", {"json_extra": {"episode_id": "ghost-1"}}),
        ("GET", "/state", {"params": {"episode_id": "ghost-1"}}),
        ("GET", "/state/medium_missing_dtype", {"params": {"episode_id": "ghost-1"}}),
        ("GET", "/state", {"headers": {"X-Episode-Id": "ghost-1"}}),
    ],
)
def test_unknown_episode(client: TestClient, method: str, path: str, kwargs: dict) -> None:
    kwargs = dict(kwargs)
    json_body = None
    if method == "POST":
        json_body = {"operation": "validate_schema", **kwargs.pop("json_extra", {})}
    response = client.request(method, path, json=json_body, **kwargs)
    assert "ghost-1" in assert_error(response, 404, "UNKNOWN_EPISODE")["detail"]


def test_task_mismatch_leaves_both_episodes_unchanged(client: TestClient) -> None:
    """An id of another task's episode answers like an absent id (404, no existence
    oracle); a path and body naming two tasks is 409 TASK_MISMATCH."""
    warm = start(client, "medium_missing_dtype", "mine-medium")
    before = state_of(client, "mine-medium")
    client.post("/reset/easy_dedup_rename")
    easy_before = client.get("/state/easy_dedup_rename").json()
    assert_error(
        client.post(
            "/step/easy_dedup_rename",
            json={"operation": "validate_schema"},
            params={"episode_id": "mine-medium"},
        ),
        404,
        "UNKNOWN_EPISODE",
    )
    assert_error(
        client.post(
            "/step",
            json={
                "task_id": "easy_dedup_rename",
                "episode_id": "mine-medium",
                "operation": "validate_schema",
            },
        ),
        404,
        "UNKNOWN_EPISODE",
    )
    assert_error(
        client.get("/state/easy_dedup_rename", params={"episode_id": "mine-medium"}),
        404,
        "UNKNOWN_EPISODE",
    )
    assert_error(
        client.post("/reset/easy_dedup_rename", json={"task_id": "medium_missing_dtype"}),
        409,
        "TASK_MISMATCH",
    )
    assert client.get("/state/easy_dedup_rename").json() == easy_before
    assert_still_serves(client, "medium_missing_dtype", "mine-medium", before, warm)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_step_after_finish_is_409(client: TestClient, task_id: str) -> None:
    start(client, task_id, f"done-{task_id}")
    finished = client.post(
        f"/step/{task_id}", json={"operation": "finish"}, params={"episode_id": f"done-{task_id}"}
    ).json()
    assert finished["done"] is True
    before = state_of(client, f"done-{task_id}")
    assert before["done"] is True and before["step_count"] == 2
    for body in ({"operation": "validate_schema"}, {"operation": "finish"}, {"operation": "nope"}):
        response = client.post(
            f"/step/{task_id}", json=body, params={"episode_id": f"done-{task_id}"}
        )
        assert_error(response, 409, "EPISODE_FINISHED")
    assert state_of(client, f"done-{task_id}") == before
    again = client.post(f"/reset/{task_id}", json={"episode_id": f"done-{task_id}"})
    assert again.status_code == 200 and again.json()["done"] is False
    assert state_of(client, f"done-{task_id}")["step_count"] == 0


# ── reset errors ─────────────────────────────────────────────────────────────


@pytest.mark.parametrize("seed", [-1, "7", True, False, 1.5, 2**63, [1], {"v": 1}])
def test_invalid_seed_is_422_and_keeps_the_episode(client: TestClient, seed: Any) -> None:
    warm = start(client, "hard_full_pipeline", "seeded")
    before = state_of(client, "seeded")
    response = client.post("/reset/hard_full_pipeline", json={"seed": seed, "episode_id": "seeded"})
    assert "seed" in assert_error(response, 422)["detail"]
    assert_still_serves(client, "hard_full_pipeline", "seeded", before, warm)


@pytest.mark.parametrize("episode_id", ["has space", "a" * 129, "é", "../x", 5])
def test_invalid_episode_id_on_reset(client: TestClient, episode_id: Any) -> None:
    assert_error(client.post("/reset/easy_dedup_rename", json={"episode_id": episode_id}), 422)


def test_unknown_reset_field_is_refused(client: TestClient) -> None:
    assert_error(client.post("/reset/easy_dedup_rename", json={"sed": 1}), 422, "INVALID_ACTION")


# ── body size ────────────────────────────────────────────────────────────────


def test_body_over_limit_is_413_and_changes_nothing() -> None:
    with TestClient(create_app(Settings(max_body_bytes=256))) as small:
        warm = start(small, "medium_missing_dtype", "big")
        before = state_of(small, "big")
        padded = b'{"operation": "fill_missing_mode"' + b" " * 300 + b"}"
        response = small.post(
            "/step/medium_missing_dtype",
            content=padded,
            headers={"content-type": "application/json", "X-Episode-Id": "big"},
        )
        assert_error(response, 413, "BODY_TOO_LARGE")

        def chunks():  # no content-length: the limit must hold while streaming
            for _ in range(8):
                yield b" " * 50
            yield b'{"operation": "fill_missing_mode"}'

        response = small.post(
            "/step/medium_missing_dtype", content=chunks(), headers={"X-Episode-Id": "big"}
        )
        assert_error(response, 413, "BODY_TOO_LARGE")
        response = small.post(
            "/reset/medium_missing_dtype",
            content=b'{"episode_id": "big"' + b" " * 300 + b"}",
            headers={"content-type": "application/json"},
        )
        assert_error(response, 413, "BODY_TOO_LARGE")
        assert_still_serves(small, "medium_missing_dtype", "big", before, warm)
        # just under the limit is fine
        fits = b'{"operation": "fill_missing_mode"}'.ljust(256)
        response = small.post(
            "/step/medium_missing_dtype",
            content=fits,
            headers={"content-type": "application/json", "X-Episode-Id": "big"},
        )
        assert response.status_code == 200, response.text
        assert response.json()["observation"]["step"] == 3


def test_unknown_route_and_method_are_json_errors(client: TestClient) -> None:
    assert_error(client.get("/no/such/path"), 404)
    assert_error(client.put("/step/easy_dedup_rename"), 405)


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("TRACE", "/health", "GET"),
        ("PUT", "/step/easy_dedup_rename", "POST"),
        ("GET", "/reset", "POST"),
    ],
)
def test_405_names_the_allowed_methods(
    client: TestClient, method: str, path: str, allow: str
) -> None:
    answer = client.request(method, path)
    assert_error(answer, 405, "METHOD_NOT_ALLOWED")
    assert answer.headers["allow"] == allow


# ── fuzz: odd bodies never make the server answer 500 ────────────────────────

DEEP_ARRAY = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 20_000 + b"1" + b"}" * 20_000
HUGE_INT = b"9" * 5000

FUZZ: list[Any] = [
    b"",
    b"null",
    b"true",
    b"0",
    b"-1e999",
    b'"remove_duplicates"',
    b"[]",
    b"{",
    b'{"operation":}',
    b"\xff\xfe\x00\x01",
    b"\x00" * 32,
    DEEP_ARRAY,
    DEEP_OBJECT,
    b'{"operation": "fill_missing", "parameters": {"strategy": "constant", "value": '
    + HUGE_INT
    + b"}}",
    b'{"seed": ' + HUGE_INT + b"}",
    b'{"operation": NaN}',
    b'{"operation": "fill_missing", "parameters": {"strategy": "constant", "value": NaN}}',
    b'{"operation": "fill_missing", "parameters": {"strategy": "constant", "value": Infinity}}',
    b'{"seed": NaN}',
    b'{"seed": Infinity}',
    b'{"operation": "fill_missing", "parameters": {"column": "\\ud800"}}',
    {"operation": None, "parameters": None},
    {"operation": ["finish"]},
    {"operation": {"name": "finish"}},
    {"operation": "finish\u0000"},
    {"operation": "\ufb01nish"},
    {"operation": "FINISH"},
    {"operation": " finish "},
    {"operation": "x" * 10_000},
    {"operation": "fill_missing", "parameters": {"column": "年龄", "strategy": "mode"}},
    {"operation": "fill_missing", "parameters": {"strategy": "constant", "value": {"a": [1]}}},
    {"operation": "fill_missing", "parameters": {"strategy": "constant", "value": [None]}},
    {"operation": "fill_missing", "parameters": {"strategy": None}},
    {"operation": "fill_missing", "parameters": {"strategy": "constant", "value": 10**30}},
    {"operation": "fill_missing", "parameters": {"strategy": "constant", "value": 1e308}},
    {"operation": "fill_missing", "parameters": {"strategy": "constant", "value": "NaN"}},
    {"operation": "fill_missing", "parameters": {"strategy": "constant", "value": "\U0001f600"}},
    {"operation": "remove_outliers", "parameters": {"threshold": 1e-320}},
    {"operation": "remove_outliers", "parameters": {"threshold": 1e308}},
    {"operation": "remove_outliers", "parameters": {"method": "zscore", "threshold": 0.0001}},
    {"operation": "rename_columns", "parameters": {"mapping": {"age": ""}}},
    {"operation": "rename_columns", "parameters": {"mapping": {"age": None}}},
    {"operation": "rename_columns", "parameters": {"mapping": {"age": "x" * 65}}},
    {"operation": "rename_columns", "parameters": {"mapping": {"age": "\u0000"}}},
    {"operation": "remove_duplicates", "parameters": {"subset": "age"}},
    {"operation": "remove_duplicates", "parameters": {"subset": [None]}},
    {"operation": "remove_duplicates", "parameters": {"subset": []}},
    {"operation": "fix_dtype", "parameters": {"dtype": None}},
    {"operation": "fix_dtype", "parameters": {"dtype": "datetime", "column": "salary"}},
    {"operation": "fix_dtype", "parameters": {"dtype": "bool", "column": "purchases"}},
    {"action": None},
    {"action": {"action": {"operation": "finish"}}},
    {"task_id": 5, "operation": "finish"},
    {"task_id": None, "episode_id": None, "operation": None},
    {"episode_id": ["x"], "operation": "finish"},
    {"episode_id": "../../etc/passwd", "operation": "validate_schema"},
    {"seed": -1, "episode_id": "", "task_id": ""},
    {"seed": 2**64, "episode_id": "x" * 500},
    {"request_id": {"deep": [1, 2, {"x": None}]}, "timeout_s": "soon"},
]


def fuzz_id(index: int) -> str:
    body = FUZZ[index]
    text = body[:40].decode("latin-1") if isinstance(body, bytes) else json.dumps(body)[:40]
    return f"{index}-" + ("_".join(re.findall(r"[A-Za-z0-9]+", text))[:30] or "punctuation")


@pytest.fixture
def lenient() -> Iterator[TestClient]:
    """A client that reports a server crash as the 500 a real client would get."""
    with TestClient(create_app(Settings()), raise_server_exceptions=False) as test_client:
        yield test_client


def send(client: TestClient, path: str, body: Any, **kwargs):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post(path, content=raw, headers={"content-type": "application/json"}, **kwargs)


def assert_answer_is_sane(response) -> dict[str, Any]:
    assert response.status_code != 500, response.text
    assert response.status_code == 200 or 400 <= response.status_code < 500, response.text
    body = response.json()
    if response.status_code == 200:
        assert set(body) == {"observation", "reward", "done", "info"}
    else:
        assert ERROR_KEYS <= set(body) <= REFUSAL_KEYS
        assert isinstance(body["detail"], str) and isinstance(body["code"], str)
    return body


@pytest.mark.parametrize("index", range(len(FUZZ)), ids=fuzz_id)
def test_fuzz_step(lenient: TestClient, index: int) -> None:
    client = lenient
    task_id = "medium_missing_dtype"
    assert client.post(f"/reset/{task_id}", json={"episode_id": "fuzz"}).status_code == 200
    response = send(client, f"/step/{task_id}", FUZZ[index], params={"episode_id": "fuzz"})
    assert_answer_is_sane(response)
    state = state_of(client, "fuzz")
    assert state["step_count"] == (1 if response.status_code == 200 else 0)
    follow = client.post(
        f"/step/{task_id}", json={"operation": "validate_schema"}, params={"episode_id": "fuzz"}
    )
    if state["done"]:
        assert_error(follow, 409, "EPISODE_FINISHED")
    else:
        assert follow.status_code == 200, follow.text
        json.dumps(follow.json(), allow_nan=False)


@pytest.mark.parametrize("index", range(len(FUZZ)), ids=fuzz_id)
def test_fuzz_reset(lenient: TestClient, index: int) -> None:
    client = lenient
    task_id = "hard_full_pipeline"
    response = send(client, f"/reset/{task_id}", FUZZ[index])
    body = assert_answer_is_sane(response)
    if response.status_code == 200:
        assert body["observation"]["step"] == 0
        assert body["observation"]["task_id"] == task_id
    assert client.get("/health").json() == {"status": "healthy", "tasks_loaded": len(ALL_TASK_IDS)}


@pytest.mark.parametrize(
    ("path", "body", "detail"),
    [
        (
            f"/step/{TASK_IDS[0]}",
            '{"operation": "finish" "parameters": {}}',
            "invalid JSON at line 1, column 24: Expecting ',' delimiter",
        ),
        ("/reset", '{\n  "seed": 3,\n  "split": train\n}', "invalid JSON at line 3, column 12: "),
        ("/leaderboard/submit", "{'model_name': 'x'}", "invalid JSON at line 1, column 2: "),
    ],
)
def test_malformed_json_says_where(client: TestClient, path: str, body: str, detail: str) -> None:
    response = client.post(path, content=body, headers={"content-type": "application/json"})
    answer = assert_error(response, 422, "INVALID_JSON")
    assert answer["detail"].startswith(detail), answer
    assert "JSONDecodeError" not in answer["detail"]


@pytest.mark.parametrize(
    ("operation", "code", "nearest"),
    [
        ("remove_duplicate", "UNKNOWN_OPERATION", "remove_duplicates"),
        ("Finish", "UNKNOWN_OPERATION", "finish"),
        ("explode", "UNKNOWN_OPERATION", None),
        ("sql", "OPERATION_NOT_ALLOWED", None),  # an operation, of other tasks
        ("remove_outliers", "OPERATION_NOT_ALLOWED", "remove_duplicates"),
    ],
)
def test_a_refused_operation_lists_the_tasks_operations_and_the_nearest(
    client: TestClient, operation: str, code: str, nearest: str | None
) -> None:
    task = "easy_dedup_rename"
    allowed = next(t for t in client.get("/tasks").json()["tasks"] if t["task_id"] == task)
    parameters = {"sql": "DELETE FROM t"} if operation == "sql" else {}
    refused = client.post(f"/step/{task}", json={"operation": operation, "parameters": parameters})
    body = assert_error(refused, 422, code)
    assert (
        body["allowed"]
        == allowed["operations"]
        == [
            "remove_duplicates",
            "rename_columns",
            "fill_missing",
            "fix_dtype",
            "validate_schema",
            "finish",
        ]
    )
    assert body["did_you_mean"] == nearest
    assert ", ".join(allowed["operations"]) in body["detail"]
    if nearest is not None:
        assert f"did you mean {nearest!r}?" in body["detail"]
