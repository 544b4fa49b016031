"""SQL where it is offered, against a real uvicorn: a `query`'s result is the same field of
the observation at every door (REST, /ws, /mcp, in process), and the claim task kinds offer
`query` everywhere and `sql` only inside the audit's fix phase, under their rules."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastmcp import Client

from dataclean_env.client import CleaningAction, DataCleaningClient
from dataclean_env.in_process import DataCleaningEnv
from dataclean_env.tasks import default_registry
from tests.web import LiveServer

TASK, SEED = "crm", 3
ASK = "SELECT count(*) AS n, count(DISTINCT contact_id) AS ids FROM t"
EXPECTED = {"columns": ["n", "ids"], "rows": [[202, 176]], "total_rows": 1, "truncated": False}
QUERY = {"operation": "query", "parameters": {"sql": ASK}}


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


def rest_step(url: str, task_id: str, action: dict[str, Any], seed: int = SEED) -> httpx.Response:
    """A fresh episode of `task_id` at `seed`, then `action` on it."""
    first = httpx.post(f"{url}/reset", json={"task_id": task_id, "seed": seed}).json()
    episode = first["observation"]["episode_id"]
    return httpx.post(f"{url}/step", json={"episode_id": episode, **action})


async def mcp_query(url: str) -> dict[str, Any]:
    async with Client(f"{url}/mcp") as client:
        await client.call_tool("reset_episode", {"task_id": TASK, "seed": SEED})
        result = await client.call_tool("query", QUERY["parameters"])
    return result.structured_content["observation"]


def test_a_query_result_is_the_same_field_at_every_door(server: LiveServer) -> None:
    one = rest_step(server.url, TASK, QUERY)
    two = rest_step(server.url, TASK, QUERY)
    assert one.status_code == 200, one.text
    rest = one.json()["observation"]
    with DataCleaningClient(base_url=server.url).sync() as env:
        env.reset(task_id=TASK, seed=SEED)
        ws = env.step(CleaningAction(**QUERY)).observation
    mcp = asyncio.run(mcp_query(server.url))
    local = DataCleaningEnv(TASK, seed=SEED)
    local.reset()
    here = local.step(QUERY).observation
    assert rest["query_result"] == EXPECTED
    assert rest["message"] == "Query returned 1 row."
    assert ws.query_result is not None and ws.query_result.model_dump() == EXPECTED
    assert (mcp["query_result"], mcp["message"]) == (EXPECTED, rest["message"])
    assert here.model_dump(mode="json")["query_result"] == EXPECTED
    # Byte-identical: the two REST answers differ only in the episode's id.
    assert one.content.replace(rest["episode_id"].encode(), b"") == two.content.replace(
        two.json()["observation"]["episode_id"].encode(), b""
    )


def test_other_steps_carry_no_query_result(server: LiveServer) -> None:
    first = httpx.post(f"{server.url}/reset", json={"task_id": TASK, "seed": SEED}).json()
    assert first["observation"]["query_result"] is None
    paged = rest_step(server.url, TASK, {"operation": "show_rows", "parameters": {}})
    assert paged.json()["observation"]["query_result"] is None


# ── the claim task kinds ─────────────────────────────────────────────────────
@pytest.mark.parametrize("task_id", ["error_detection", "standardisation", "audit_pipeline"])
def test_every_claim_kind_offers_query_and_none_a_top_level_sql(
    server: LiveServer, task_id: str
) -> None:
    listed = httpx.get(f"{server.url}/tasks").json()["tasks"]
    (spec,) = [t for t in listed if t["task_id"] == task_id]
    assert "query" in spec["operations"] and "sql" not in spec["operations"]
    asked = rest_step(
        server.url, task_id, {"operation": "query", "parameters": {"sql": "SELECT 1"}}
    )
    assert asked.status_code == 200, asked.text
    assert asked.json()["observation"]["query_result"]["rows"] == [[1]]
    update = {"operation": "sql", "parameters": {"sql": "UPDATE t SET name = 'x'"}}
    refused = rest_step(server.url, task_id, update)
    assert refused.status_code == 422 and refused.json()["code"] == "OPERATION_NOT_ALLOWED"


def test_a_query_does_not_move_the_audit_on(server: LiveServer) -> None:
    asked = rest_step(
        server.url, "audit_pipeline", {"operation": "query", "parameters": {"sql": "SELECT 1"}}
    )
    observation = asked.json()["observation"]
    assert (observation["phase"], observation["phases_left"]) == (
        "audit",
        ["identify", "fix", "validate"],
    )


def _quoted(value: Any) -> str:
    return "'" + str(value).replace("'", "''") + "'" if isinstance(value, str) else str(value)


def in_sql(steps: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """The fix steps of the reference plan with every set_cell and drop_rows done by `sql`
    statements (20 to a step); the plan's other steps (fix_dtype) come after them."""
    statements, rest = [], []
    for step in steps:
        name, parameters = step["operation"], step["parameters"]
        if name in ("set_cell", "drop_rows"):
            assert not rest, "the plan repairs cells after changing a type: keep its order"
        if name == "set_cell":
            value = "NULL" if parameters["value"] is None else _quoted(parameters["value"])
            where = f"{key} = {_quoted(parameters['row_id'])}"
            statements.append(f'UPDATE t SET "{parameters["column"]}" = {value} WHERE {where}')
        elif name == "drop_rows":
            ids = ", ".join(map(_quoted, parameters["row_ids"]))
            statements.append(f"DELETE FROM t WHERE {key} IN ({ids})")
        else:
            rest.append(step)
    batches = [statements[i : i + 20] for i in range(0, len(statements), 20)]
    return [{"operation": "sql", "parameters": {"sql": "; ".join(b)}} for b in batches] + rest


def play(url: str, plan: list[dict[str, Any]]) -> dict[str, Any]:
    first = httpx.post(f"{url}/reset", json={"task_id": "audit_pipeline", "seed": 0}).json()
    episode = first["observation"]["episode_id"]
    body: dict[str, Any] = {}
    for action in plan:
        answer = httpx.post(f"{url}/step", json={"episode_id": episode, **action}, timeout=60)
        assert answer.status_code == 200, answer.text
        body = answer.json()
    return body


def test_an_audit_fixed_in_sql_scores_as_the_reference_plan(server: LiveServer) -> None:
    task = default_registry().make("audit_pipeline", 0, "train")
    (key,) = task.spec.protected_columns
    plan = [dict(a) for a in task.reference_plan]
    fixed = [
        {
            "operation": "fix",
            "parameters": {"operations": in_sql(a["parameters"]["operations"], key)},
        }
        if a["operation"] == "fix"
        else a
        for a in plan
    ]
    reference, sql = play(server.url, plan), play(server.url, fixed)
    assert sql["done"] is True
    assert sql["reward"] == reference["reward"]
    assert sql["reward"]["fix_score"] == 0.9999


def test_sql_in_the_audit_fix_cannot_change_the_key(server: LiveServer) -> None:
    task = default_registry().make("audit_pipeline", 0, "train")
    (key,) = task.spec.protected_columns
    first = httpx.post(f"{server.url}/reset", json={"task_id": "audit_pipeline", "seed": 0}).json()
    episode = first["observation"]["episode_id"]
    for action in task.reference_plan[:2]:  # audit, identify
        httpx.post(f"{server.url}/step", json={"episode_id": episode, **action}).raise_for_status()
    before = httpx.get(f"{server.url}/state", params={"episode_id": episode}).json()
    renumber = {"operation": "sql", "parameters": {"sql": f"UPDATE t SET {key} = {key} + 1"}}
    refused = httpx.post(
        f"{server.url}/step",
        json={"episode_id": episode, "operation": "fix", "parameters": {"operations": [renumber]}},
    )
    after = httpx.get(f"{server.url}/state", params={"episode_id": episode}).json()
    assert refused.status_code == 422 and refused.json()["code"] == "SQL_REFUSED"
    assert (after["step_count"], after["reward"]) == (before["step_count"], before["reward"])
    asked = {"operation": "query", "parameters": {"sql": "SELECT 1"}}
    nested = httpx.post(
        f"{server.url}/step",
        json={"episode_id": episode, "operation": "fix", "parameters": {"operations": [asked]}},
    )
    assert nested.status_code == 422 and nested.json()["code"] == "INVALID_PARAMETERS"
