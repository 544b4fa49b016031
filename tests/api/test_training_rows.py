"""The training rows as one call: `dataclean_env.training.rows`, and the same rows on a
server (`GET /tasks/rows`, what the verifiers taskset reads)."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from dataclean_env.server.app import create_app
from dataclean_env.training.rows import rows, to_jsonl


def test_rows_are_reset_arguments_seed_major_cut_at_n() -> None:
    assert rows(["crm", "orders"], split="eval", seeds="3-4") == [
        {"task_id": "crm", "seed": 3, "split": "eval"},
        {"task_id": "orders", "seed": 3, "split": "eval"},
        {"task_id": "crm", "seed": 4, "split": "eval"},
        {"task_id": "orders", "seed": 4, "split": "eval"},
    ]
    generated = rows("generated", seeds=range(100), n=7)
    assert len(generated) == 7 and {row["seed"] for row in generated} == {0}
    lines = to_jsonl(rows("crm", seeds=[1, 2])).splitlines()
    assert [json.loads(line) for line in lines] == rows("crm", seeds="1-2")


def test_the_server_serves_the_same_rows_and_refuses_bad_ones() -> None:
    with TestClient(create_app()) as client:
        served = client.get(
            "/tasks/rows", params={"families": "generated,easy_dedup_rename", "seeds": "0-2"}
        )
        unknown = client.get("/tasks/rows", params={"families": "no_such_family"})
        bad_seeds = client.get("/tasks/rows", params={"seeds": "zero"})
        empty = client.get("/tasks/rows", params={"families": ""})
        superscript = client.get("/tasks/rows", params={"seeds": "0-\u00b2"})  # isdigit, no int
        # A range far longer than the rows asked for: only the seeds needed are read.
        huge = client.get("/tasks/rows", params={"seeds": "0-999999999999", "n": 3})
        # The largest seed /reset takes is handed out; none beyond it (2**63), even cut by n.
        largest = client.get(
            "/tasks/rows", params={"families": "crm", "seeds": "9223372036854775807"}
        )
        played = client.post("/reset", json={**largest.json()["rows"][0], "episode_id": "big"})
        beyond = client.get(
            "/tasks/rows", params={"seeds": "9223372036854775807-9223372036854775808", "n": 1}
        )
    assert served.status_code == 200
    assert served.json()["rows"] == rows(["generated", "easy_dedup_rename"], seeds="0-2")
    assert huge.json()["rows"] == rows("generated", seeds="0", n=3)
    for refused in (unknown, empty):
        assert (refused.status_code, refused.json()["code"]) == (404, "UNKNOWN_TASK")
    for refused in (bad_seeds, superscript):
        assert refused.status_code == 422
    assert played.status_code == 200 and largest.json()["rows"][0]["seed"] == 2**63 - 1
    assert (beyond.status_code, beyond.json()["code"]) == (422, "INVALID_REQUEST")
    assert "below 2**63" in beyond.json()["detail"]
