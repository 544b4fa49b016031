"""The claim task kinds over REST: full episodes, phase order refused with a 4xx code, claims
allowed only in their kinds, and nothing in an answer that tells a claim is right."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from dataclean_env.tasks import default_registry
from tests.support import ok

KINDS = {
    "error_detection": ["detection_precision", "detection_recall", "detection_f1", "type_accuracy"],
    "standardisation": ["standardisation_score", "cell_share"],
    "audit_pipeline": ["audit_score", "identify_score", "fix_score", "validate_score"],
}


def solution(task_id: str, seed: int, split: str) -> tuple:
    return default_registry().make(task_id, seed, split).reference_plan


@pytest.mark.parametrize("task_id", [*KINDS, "detection_showcase", "audit_showcase"])
def test_full_rest_episode_reaches_the_oracle_score(client: TestClient, task_id: str) -> None:
    kind = {"detection_showcase": "error_detection", "audit_showcase": "audit_pipeline"}.get(
        task_id, task_id
    )
    body = {"seed": 2, "split": "eval", "episode_id": f"claims-{task_id}"}
    start = ok(client.post(f"/reset/{task_id}", json=body))
    assert start["reward"]["total"] == 0.0001
    assert set(start["reward"]) == {"total", "penalty", *KINDS[kind]}
    result = start
    for action in solution(task_id, 2, "eval"):
        result = ok(client.post("/step", json={"episode_id": body["episode_id"], **action}))
    if not result["done"]:
        result = ok(
            client.post("/step", json={"episode_id": body["episode_id"], "operation": "finish"})
        )
    assert result["done"] is True
    assert result["reward"]["total"] == 0.9999
    state = ok(client.get("/state", params={"episode_id": body["episode_id"]}))
    assert state["reward"] == result["reward"]


def test_audit_phases_out_of_order_get_409_and_change_nothing(client: TestClient) -> None:
    start = ok(client.post("/reset/audit_pipeline", json={"seed": 0, "episode_id": "audit-order"}))
    assert start["observation"]["phase"] == "audit"
    assert start["observation"]["phases_left"] == ["identify", "fix", "validate"]
    refused = client.post(
        "/step",
        json={"episode_id": "audit-order", "operation": "fix", "parameters": {"operations": []}},
    )
    assert refused.status_code == 409
    assert refused.json()["code"] == "PHASE_OUT_OF_ORDER"
    assert "next phase: 'audit'" in refused.json()["detail"]
    state = ok(client.get("/state", params={"episode_id": "audit-order"}))
    assert state["step_count"] == 0
    step = ok(
        client.post(
            "/step",
            json={
                "episode_id": "audit-order",
                "operation": "audit",
                "parameters": {"categories": []},
            },
        )
    )
    assert step["observation"]["phase"] == "audit"


def test_claims_are_refused_outside_their_kinds(client: TestClient) -> None:
    ok(client.post("/reset/crm", json={"episode_id": "crm-claims"}))
    refused = client.post(
        "/step",
        json={
            "episode_id": "crm-claims",
            "operation": "report_errors",
            "parameters": {"cells": []},
        },
    )
    assert refused.status_code == 422 and refused.json()["code"] == "OPERATION_NOT_ALLOWED"


def test_bad_claims_get_422_with_a_code(client: TestClient) -> None:
    start = ok(client.post("/reset/error_detection", json={"episode_id": "bad-claims"}))
    row = start["observation"]["sample_rows"][0]["staff_id"]
    for cells, fragment in (
        ([{"row_id": 1, "column": "name"}], "no row has staff_id"),
        ([{"row_id": row, "column": "nope"}], "unknown columns"),
        ([{"row_id": row, "column": "name", "error_type": "typo"}], "unknown error types"),
        ([{"row_id": row, "colum": "name"}], "colum"),
    ):
        refused = client.post(
            "/step",
            json={
                "episode_id": "bad-claims",
                "operation": "report_errors",
                "parameters": {"cells": cells},
            },
        )
        assert refused.status_code == 422, refused.text
        assert (
            refused.json()["code"] == "INVALID_PARAMETERS" and fragment in refused.json()["detail"]
        )
    assert ok(client.get("/state", params={"episode_id": "bad-claims"}))["step_count"] == 0


def test_tasks_list_the_claim_kinds(client: TestClient) -> None:
    tasks = {t["task_id"]: t for t in ok(client.get("/tasks"))["tasks"]}
    assert tasks["error_detection"]["operations"] == [
        "show_rows",
        "query",
        "report_errors",
        "finish",
    ]
    assert tasks["audit_showcase"]["family"] == "showcase"
    assert tasks["audit_pipeline"]["scoring"] == {
        "audit_score": 0.15,
        "identify_score": 0.3,
        "fix_score": 0.4,
        "validate_score": 0.15,
    }
