"""`GET /schema/compact`: the task's operations in one line each, a fraction of `/schema`."""

from __future__ import annotations

import json

from dataclean_env.server.http.compact_schema import compact_action_schema
from tests.support import ok


def test_without_a_task_it_lists_every_operation(client) -> None:
    assert ok(client.get("/schema/compact")) == compact_action_schema()


def test_with_a_task_it_lists_that_tasks_operations(client) -> None:
    body = ok(client.get("/schema/compact", params={"task_id": "easy_dedup_rename"}))
    names = [line.split("(")[0] for line in body["operations"][:-1]]
    assert names == [
        "remove_duplicates",
        "rename_columns",
        "fill_missing",
        "fix_dtype",
        "validate_schema",
        "finish",
    ]
    assert body["operations"][-1].startswith("also accepted: cast_type, fill_missing_bfill")


def test_an_unknown_task_is_a_404_with_a_code(client) -> None:
    response = client.get("/schema/compact", params={"task_id": "nope"})
    assert response.status_code == 404
    assert response.json()["code"] == "UNKNOWN_TASK"


def test_it_is_under_a_third_of_the_full_action_schema(client) -> None:
    full = len(json.dumps(ok(client.get("/schema"))["action"]))
    compact = len(json.dumps(ok(client.get("/schema/compact"))))
    per_task = len(json.dumps(ok(client.get("/schema/compact", params={"task_id": "crm"}))))
    assert full > 11000
    assert compact * 3 < full
    assert per_task * 5 < full


QUERY_LINE = (
    "query(sql: text) - One read-only SELECT over table t (the current table; NULL is a "
    "missing cell). Answers its columns, up to 50 rows, total_rows and truncated (the "
    "observation's query_result); changes nothing."
)
SQL_LINE = (
    "sql(sql: text) - Up to 20 UPDATE t ... / DELETE FROM t ... statements separated by "
    "';', all or nothing; the key column and the row order stay."
)


def test_sql_tasks_list_query_and_sql_and_the_claim_kinds_query_alone(client) -> None:
    def lines(task_id: str) -> list[str]:
        return ok(client.get("/schema/compact", params={"task_id": task_id}))["operations"]

    for task_id in ("crm", "rayyan"):
        assert {QUERY_LINE, SQL_LINE} <= set(lines(task_id)), task_id
    for task_id in ("error_detection", "standardisation", "audit_pipeline"):
        assert QUERY_LINE in lines(task_id) and SQL_LINE not in lines(task_id), task_id
    assert not {QUERY_LINE, SQL_LINE} & set(lines("easy_dedup_rename"))
