"""set_cells over HTTP (issue 39, item 1): listed by /tasks and /schema for a real table,
the reference plan of a generated pair with conflicting sources played through /step
reaches F1 1.0 within the budget /tasks states, and a batch past its bounds is refused with
422 and a code, changing nothing."""

from __future__ import annotations

from fastapi.testclient import TestClient

from dataclean_env.operations.rows import MAX_CELL_ASSIGNMENTS
from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings
from dataclean_env.tasks import registry_for
from tests.dirty_pair import write_conflict_pair


def test_the_plan_repairs_a_generated_table_over_http_and_a_bad_batch_changes_nothing(
    tmp_path,
) -> None:
    wrong = write_conflict_pair(tmp_path / "tables" / "reports", 1000, 0.4, seed=2)
    settings = Settings(extra_datasets=str(tmp_path / "tables"))
    plan = registry_for(settings).make("reports", None).reference_plan
    with TestClient(create_app(settings)) as client:
        listed = {t["task_id"]: t for t in client.get("/tasks").json()["tasks"]}
        assert "set_cells" in listed["reports"]["operations"]
        budget = listed["reports"]["max_steps"]
        schema = client.get("/schema").json()
        assert "set_cells" in str(schema)
        client.post("/reset/reports", json={"episode_id": "r"})
        too_many = [{"row_id": 100_000, "column": "city", "value": "Austin"}] * (
            MAX_CELL_ASSIGNMENTS + 1
        )
        refused = client.post(
            "/step/reports",
            json={"episode_id": "r", "operation": "set_cells", "parameters": {"cells": too_many}},
        )
        assert refused.status_code == 422
        assert refused.json()["code"] == "INVALID_PARAMETERS"
        state = client.get("/state", params={"episode_id": "r"}).json()
        assert (state["step_count"], state["repair"]["cells_changed"]) == (0, 0)
        for action in plan:
            step = client.post("/step/reports", json={"episode_id": "r", **action})
            assert step.status_code == 200, step.text
        result = step.json()
        assert result["info"]["repair"] == {
            "precision": 1.0,
            "recall": 1.0,
            "f1": 1.0,
            "cells_changed": wrong,
        }
        assert result["info"]["step"] == len(plan) <= budget
