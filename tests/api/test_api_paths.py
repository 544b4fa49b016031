"""Every REST path of the contract, through the FastAPI TestClient, with exact answers."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from dataclean_env import __version__
from dataclean_env.settings import Settings
from dataclean_env.tasks.fixed import read_table
from tests.support import (
    ALL_TASK_IDS,
    CLAIM_TASK_IDS,
    CORPUS_IDS,
    GENERATED_IDS,
    REAL_IDS,
    REWARD_FIELDS,
    TASK_IDS,
    ok,
)

DATASETS = Settings().datasets_dir
MAX_STEPS = {
    "easy_dedup_rename": 10,
    "medium_missing_dtype": 15,
    "hard_full_pipeline": 20,
    "expert_sales_pipeline": 25,
}
OBSERVATION_FIELDS = {
    "episode_id",
    "task_id",
    "step",
    "steps_remaining",
    "dataset_info",
    "columns",
    "shape",
    "missing_values",
    "dtypes",
    "duplicate_count",
    "sample_rows",
    "sample_offset",
    "available_operations",
    "task_description",
    "message",
    "column_profiles",
}
# medium_missing_dtype: 18 missing cells (age 5, salary 5, gender 4, region 4); a mean fill
# puts gold values into the 10 numeric ones; missing and dtype weigh 0.5 each.
MEDIUM_MEAN_MISSING = round(10 / 18, 4)
MEDIUM_MEAN_TOTAL = round(0.5 * 10 / 18, 4)


def dirty_table(entry: dict[str, Any]):
    return read_table(DATASETS / entry["folder"] / "dirty.csv", entry.get("text_columns"))


# ── service paths ────────────────────────────────────────────────────────────


def test_root_lists_service_metadata(client: TestClient) -> None:
    body = ok(client.get("/"))
    assert body["name"] == "data-cleaning-openenv"
    assert body["version"] == __version__
    assert body["status"] == "running"
    assert body["tasks"] == ALL_TASK_IDS
    expected = {
        "GET /",
        "GET /health",
        "GET /tasks",
        "GET /validate",
        "GET /docs",
        "POST /reset",
        "POST /reset/{task_id}",
        "POST /step",
        "POST /step/{task_id}",
        "GET /state",
        "GET /state/{task_id}",
    }
    assert expected <= set(body["endpoints"])


def test_health_is_exact(client: TestClient) -> None:
    assert ok(client.get("/health")) == {"status": "healthy", "tasks_loaded": len(ALL_TASK_IDS)}


def test_tasks_agree_with_task_metadata(client: TestClient, metadata: dict[str, dict]) -> None:
    tasks = ok(client.get("/tasks"))["tasks"]
    assert [t["task_id"] for t in tasks] == ALL_TASK_IDS
    for task in tasks[: len(TASK_IDS)]:
        entry = metadata[task["task_id"]]
        assert {
            "task_id",
            "difficulty",
            "description",
            "max_steps",
            "operations",
            "scoring",
        } <= set(task)
        assert task["max_steps"] == MAX_STEPS[task["task_id"]] == entry["max_steps"]
        assert task["difficulty"] == entry["difficulty"]
        assert task["description"] == entry["description"]
        assert task["operations"] == entry["operations_allowed"]
        assert task["scoring"] == entry["scoring"]
        assert math.isclose(sum(task["scoring"].values()), 1.0)


def test_tasks_scoring_weights(client: TestClient) -> None:
    scoring = {t["task_id"]: t["scoring"] for t in ok(client.get("/tasks"))["tasks"]}
    preservation = {"repair_score": 0.8, "preservation_score": 0.0, "row_integrity_score": 0.2}
    audit = {"audit_score": 0.15, "identify_score": 0.3, "fix_score": 0.4, "validate_score": 0.15}
    assert scoring == {
        **{
            task_id: {"detection_f1": 1.0}
            for task_id in ("error_detection", "detection_showcase", "rayyan_detection")
        },
        **{
            task_id: {"standardisation_score": 1.0}
            for task_id in ("standardisation", "standardisation_showcase")
        },
        **{task_id: audit for task_id in ("audit_pipeline", "audit_showcase", "rayyan_audit")},
        "fix_types": preservation,
        "normalize_dedupe": preservation,
        "full_pipeline": preservation,
        "crm": preservation,
        "orders": preservation,
        "inventory": preservation,
        "rayyan": {"net_repair": 1.0},
        "rayyan-labelled": {"net_repair": 1.0},
        **{task_id: {"net_repair": 1.0} for task_id in CORPUS_IDS},
        "easy_dedup_rename": {"duplicate_score": 0.5, "schema_score": 0.5},
        "medium_missing_dtype": {"missing_score": 0.5, "dtype_score": 0.5},
        "hard_full_pipeline": {
            "duplicate_score": 0.2,
            "missing_score": 0.2,
            "dtype_score": 0.2,
            "outlier_score": 0.2,
            "schema_score": 0.2,
        },
        "expert_sales_pipeline": {
            "duplicate_score": 0.15,
            "missing_score": 0.2,
            "dtype_score": 0.2,
            "outlier_score": 0.2,
            "schema_score": 0.25,
        },
    }


def test_validate_passes_every_task(client: TestClient) -> None:
    body = ok(client.get("/validate"))
    assert body["openenv_valid"] is True
    assert list(body["tasks"]) == ALL_TASK_IDS
    for task_id, report in body["tasks"].items():
        assert report["status"] == "passed", (task_id, report)


def test_docs_is_swagger_html(client: TestClient) -> None:
    response = client.get("/docs")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "swagger" in response.text.lower()


# ── reset ────────────────────────────────────────────────────────────────────


def check_fresh_result(body: dict[str, Any], task_id: str, entry: dict[str, Any]) -> None:
    assert set(body) == {"observation", "reward", "done", "info"}
    obs = body["observation"]
    assert set(obs) >= OBSERVATION_FIELDS
    assert body["done"] is False
    assert body["reward"] == dict.fromkeys(REWARD_FIELDS, 0.0001)
    assert obs["task_id"] == task_id
    assert obs["step"] == 0
    assert obs["steps_remaining"] == MAX_STEPS[task_id]
    assert obs["task_description"] == entry["description"]
    # The task's operations as /tasks lists them: aliases (fill_missing_mean, ...) are
    # accepted, not advertised.
    assert obs["available_operations"] == entry["operations_allowed"]

    dirty = dirty_table(entry)
    rows, cols = dirty.shape
    assert obs["columns"] == list(dirty.columns)
    assert obs["shape"] == [rows, cols]
    missing = {c: int(n) for c, n in dirty.isna().sum().items()}
    assert obs["missing_values"] == missing
    assert set(obs["dtypes"]) == set(dirty.columns)
    duplicates = int(dirty.duplicated().sum())
    assert obs["duplicate_count"] == duplicates
    assert obs["dataset_info"] == {
        "total_rows": rows,
        "total_columns": cols,
        "has_duplicates": duplicates > 0,
        "has_missing": sum(missing.values()) > 0,
    }
    assert 1 <= len(obs["sample_rows"]) <= 5
    for i, record in enumerate(obs["sample_rows"]):
        assert list(record) == list(dirty.columns)
        for column, value in record.items():
            if dirty[column].isna().iloc[i]:
                assert value == "NULL"
            else:
                assert value != "NULL"

    assert body["info"]["episode_id"] == obs["episode_id"]
    assert body["info"]["task_id"] == task_id
    assert body["info"]["step"] == 0
    assert body["info"]["max_steps"] == MAX_STEPS[task_id]
    assert body["info"]["last_action"] is None


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reset_by_path(client: TestClient, metadata: dict[str, dict], task_id: str) -> None:
    body = ok(client.post(f"/reset/{task_id}"))
    check_fresh_result(body, task_id, metadata[task_id])
    assert body["observation"]["episode_id"]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reset_with_task_id_in_body(
    client: TestClient, metadata: dict[str, dict], task_id: str
) -> None:
    body = ok(client.post("/reset", json={"task_id": task_id}))
    check_fresh_result(body, task_id, metadata[task_id])


def test_reset_without_body_starts_first_task(
    client: TestClient, metadata: dict[str, dict]
) -> None:
    body = ok(client.post("/reset"))
    check_fresh_result(body, TASK_IDS[0], metadata[TASK_IDS[0]])


def test_reset_with_episode_id_and_seed(client: TestClient, metadata: dict[str, dict]) -> None:
    task_id = "hard_full_pipeline"
    body = ok(client.post(f"/reset/{task_id}", json={"seed": 7, "episode_id": "paths-seeded"}))
    assert body["observation"]["episode_id"] == "paths-seeded"
    assert body["info"]["episode_id"] == "paths-seeded"
    assert body["reward"] == dict.fromkeys(REWARD_FIELDS, 0.0001)
    state = ok(client.get("/state", params={"episode_id": "paths-seeded"}))
    assert state["seed"] == 7
    assert state["task_id"] == task_id


# ── step ─────────────────────────────────────────────────────────────────────

MEAN_FILL_BODIES = {
    "envelope": {"operation": "fill_missing", "parameters": {"strategy": "mean"}},
    "wrapped": {"action": {"operation": "fill_missing", "parameters": {"strategy": "mean"}}},
    "name_params": {"name": "fill_missing", "params": {"strategy": "mean"}},
    "action_type": {"action_type": "fill_missing", "parameters": {"strategy": "mean"}},
    "action_type_params": {"action_type": "fill_missing", "params": {"strategy": "mean"}},
    "wrapped_name": {"action": {"name": "fill_missing", "params": {"strategy": "mean"}}},
    "alias": {"operation": "fill_missing_mean"},
    "alias_empty_params": {"operation": "fill_missing_mean", "parameters": {}},
    "alias_same_strategy": {"operation": "fill_missing_mean", "parameters": {"strategy": "mean"}},
    "alias_name": {"name": "fill_missing_mean"},
    "null_params": {"action_type": "fill_missing_mean", "params": None},
}


def check_mean_fill(body: dict[str, Any]) -> None:
    obs = body["observation"]
    assert obs["step"] == 1
    assert obs["steps_remaining"] == 14
    assert obs["missing_values"] == {
        "customer_id": 0,
        "age": 0,
        "salary": 0,
        "gender": 4,
        "purchases": 0,
        "region": 4,
        "joined_date": 0,
    }
    assert body["reward"]["missing_score"] == MEDIUM_MEAN_MISSING
    assert body["reward"]["total"] == MEDIUM_MEAN_TOTAL
    assert body["reward"]["penalty"] == 0.0001
    assert body["done"] is False
    assert body["info"]["step"] == 1
    assert body["info"]["last_action"] == {
        "operation": "fill_missing",
        "parameters": {"strategy": "mean"},
    }


@pytest.mark.parametrize("shape", list(MEAN_FILL_BODIES))
def test_step_by_path_accepts_every_spelling(client: TestClient, shape: str) -> None:
    task_id = "medium_missing_dtype"
    episode_id = ok(client.post(f"/reset/{task_id}"))["observation"]["episode_id"]
    body = ok(client.post(f"/step/{task_id}", json=MEAN_FILL_BODIES[shape]))
    check_mean_fill(body)
    assert body["observation"]["episode_id"] == episode_id
    state = ok(client.get(f"/state/{task_id}"))
    assert state["step_count"] == 1
    assert [(h["step"], h["operation"], h["parameters"]) for h in state["history"]] == [
        (1, "fill_missing", {"strategy": "mean"})
    ]


def test_step_with_ids_in_body(client: TestClient) -> None:
    task_id = "medium_missing_dtype"
    ok(client.post(f"/reset/{task_id}", json={"episode_id": "body-ids"}))
    first = ok(
        client.post(
            "/step",
            json={
                "task_id": task_id,
                "episode_id": "body-ids",
                "operation": "fill_missing",
                "parameters": {"strategy": "mean"},
            },
        )
    )
    check_mean_fill(first)
    assert first["observation"]["episode_id"] == "body-ids"
    second = ok(
        client.post(
            "/step",
            json={"episode_id": "body-ids", "action": {"operation": "fill_missing_mode"}},
        )
    )
    assert second["observation"]["step"] == 2
    assert second["reward"]["missing_score"] == 0.9999
    assert second["info"]["last_action"] == {
        "operation": "fill_missing",
        "parameters": {"strategy": "mode"},
    }


def test_step_without_ids_uses_first_task_default(client: TestClient) -> None:
    reset = ok(client.post("/reset"))
    body = ok(client.post("/step", json={"operation": "remove_duplicates"}))
    assert body["observation"]["task_id"] == TASK_IDS[0]
    assert body["observation"]["episode_id"] == reset["observation"]["episode_id"]
    assert body["observation"]["step"] == 1


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_solution_over_http(client: TestClient, metadata: dict[str, dict], task_id: str) -> None:
    plan = metadata[task_id]["solution"]
    ok(client.post(f"/reset/{task_id}"))
    for number, action in enumerate(plan, start=1):
        body = ok(client.post(f"/step/{task_id}", json=action))
        assert body["observation"]["step"] == number
        assert body["done"] is (number == len(plan))
    assert body["reward"] == {
        "total": 0.9999,
        **{k: 0.9999 for k in metadata[task_id]["scoring"]},
        **{k: 0.0001 for k in set(REWARD_FIELDS) - {"total"} - set(metadata[task_id]["scoring"])},
    }
    state = ok(client.get(f"/state/{task_id}"))
    assert state["done"] is True
    assert [h["operation"] for h in state["history"]] == [a["operation"] for a in plan]


# ── state ────────────────────────────────────────────────────────────────────


def test_state_by_path_and_by_query(client: TestClient) -> None:
    task_id = "easy_dedup_rename"
    reset = ok(client.post(f"/reset/{task_id}", json={"episode_id": "state-q"}))
    ok(
        client.post(
            f"/step/{task_id}",
            json={"operation": "remove_duplicates"},
            params={"episode_id": "state-q"},
        )
    )
    by_query = ok(client.get("/state", params={"task_id": task_id, "episode_id": "state-q"}))
    by_id_only = ok(client.get("/state", params={"episode_id": "state-q"}))
    by_path = ok(client.get(f"/state/{task_id}", params={"episode_id": "state-q"}))
    assert by_query == by_id_only == by_path
    assert by_query["episode_id"] == "state-q" == reset["observation"]["episode_id"]
    assert by_query["task_id"] == task_id
    assert by_query["seed"] is None
    assert by_query["step_count"] == 1
    assert by_query["max_steps"] == 10
    assert by_query["steps_remaining"] == 9
    assert by_query["done"] is False
    assert by_query["shape"] == [15, 5]  # 20 rows, 5 exact duplicates
    assert by_query["reward"]["duplicate_score"] == 0.9999
    assert [(h["step"], h["operation"], h["parameters"]) for h in by_query["history"]] == [
        (1, "remove_duplicates", {})
    ]
    assert "Removed 5 duplicate rows" in by_query["history"][0]["message"]


def test_state_of_default_episode(client: TestClient) -> None:
    task_id = "medium_missing_dtype"
    reset = ok(client.post(f"/reset/{task_id}"))
    by_path = ok(client.get(f"/state/{task_id}"))
    by_query = ok(client.get("/state", params={"task_id": task_id}))
    assert by_path == by_query
    assert by_path["episode_id"] == reset["observation"]["episode_id"]
    assert by_path["step_count"] == 0
    assert by_path["history"] == []
    assert by_path["shape"] == [30, 7]


# ── no gold in what the agent sees ───────────────────────────────────────────


def leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in leaves(v)]
    return [value]


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | np.integer | np.floating):
        return None if math.isnan(value) else float(value)
    if isinstance(value, str):
        try:
            return float(value.replace("$", "").replace(",", ""))
        except ValueError:
            return None
    return None


def hidden_fill_values(entry: dict[str, Any]) -> set[float]:
    """Gold values of cells missing in dirty that appear nowhere in the dirty table."""
    dirty = dirty_table(entry).rename(columns=entry.get("header_map") or {})
    gold = read_table(DATASETS / entry["folder"] / "gold.csv")
    key = entry["key_column"]
    dirty_numbers = {as_number(v) for v in leaves(dirty.to_dict("list"))} - {None}
    gold_by_key = gold.set_index(key)
    hidden = set()
    for column in dirty.columns:
        for row_key in dirty.loc[dirty[column].isna(), key]:
            if row_key not in gold_by_key.index:
                continue  # an outlier row gold dropped
            value = as_number(gold_by_key.loc[row_key, column])
            if value is not None and value not in dirty_numbers:
                hidden.add(value)
    return hidden


# hard_full_pipeline's median fills equal values already in its dirty table, so they
# cannot be told apart from what the table legitimately shows.
@pytest.mark.parametrize("task_id", ["medium_missing_dtype", "expert_sales_pipeline"])
def test_observation_never_shows_gold_fill_values(
    client: TestClient, metadata: dict[str, dict], task_id: str
) -> None:
    hidden = hidden_fill_values(metadata[task_id])
    if task_id == "medium_missing_dtype":
        assert 87640.0 in hidden  # the gold salary fill
    assert hidden, "the task should have gold fills that dirty does not show"
    answers = [
        ok(client.post(f"/reset/{task_id}")),
        ok(client.get(f"/state/{task_id}")),
        ok(client.get("/tasks")),
        ok(client.post(f"/step/{task_id}", json={"operation": "validate_schema"})),
    ]
    shown = {as_number(leaf) for leaf in leaves(answers)} - {None}
    assert not hidden & shown
    text = json.dumps(answers)
    for value in hidden:
        if value >= 1000:  # long enough that a substring match is no coincidence
            assert f"{value:,.2f}".removesuffix(".00") not in text


def test_medium_gold_is_not_leaked_verbatim(client: TestClient) -> None:
    body = ok(client.post("/reset/medium_missing_dtype"))
    text = json.dumps(body)
    assert "87640" not in text
    assert "87,640" not in text


def test_tasks_lists_the_families_and_how_to_instantiate_them(client: TestClient) -> None:
    families = ok(client.get("/tasks"))["families"]
    assert [(f["name"], f["task_ids"]) for f in families] == [
        ("fixed", TASK_IDS),
        ("generated", GENERATED_IDS),
        ("claims", CLAIM_TASK_IDS),
        ("corpus", CORPUS_IDS),
        ("custom", REAL_IDS),
    ]
    generated = families[1]["instantiate"]
    assert '"seed"' in generated and '"split"' in generated


def test_an_alias_is_accepted_though_not_advertised(client) -> None:
    """`fill_missing_mean` is fill_missing with strategy mean: a step may name it, and the
    observations list only the operations /tasks and the page show."""
    listed = {t["task_id"]: t for t in ok(client.get("/tasks"))["tasks"]}
    reset = ok(client.post("/reset/medium_missing_dtype", json={"episode_id": "alias"}))
    operations = reset["observation"]["available_operations"]
    assert operations == listed["medium_missing_dtype"]["operations"]
    assert "fill_missing_mean" not in operations and "fill_missing" in operations
    step = client.post(
        "/step/medium_missing_dtype",
        json={"episode_id": "alias", "operation": "fill_missing_mean", "parameters": {}},
    )
    assert step.status_code == 200
    assert ok(step)["reward"]["missing_score"] == MEDIUM_MEAN_MISSING
    assert ok(step)["observation"]["available_operations"] == operations
