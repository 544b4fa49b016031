"""Issue 40, smaller items, over real HTTP: the label budget is counted per instance and
client across resets (resetting the episode id does not refill it), and no SQL setting
shows the server's directories."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx

from dataclean_env.engine.episode import Episode
from dataclean_env.tasks import TaskRegistry
from tests.support import ok
from tests.web import LOCAL_PROXY, LiveServer

LABELLED = "rayyan-labelled"


def row_ids(registry: TaskRegistry, count: int) -> list[object]:
    snapshot = Episode("ids", registry.make(LABELLED, None)).snapshot
    return list(snapshot.values[snapshot.columns[0]][:count])


def label(http: httpx.Client, episode_id: str, ids: list[object], **headers: str) -> httpx.Response:
    body = {"episode_id": episode_id, "operation": "label", "parameters": {"row_ids": ids}}
    return http.post("/step", json=body, headers=headers)


def test_resetting_an_episode_id_does_not_refill_the_label_budget(registry: TaskRegistry) -> None:
    ids = row_ids(registry, 25)
    # 127.0.0.1 a trusted proxy: the test plays a second client by X-Forwarded-For.
    with LiveServer(LOCAL_PROXY) as live, httpx.Client(base_url=live.url, timeout=120) as http:
        reset = {"task_id": LABELLED, "episode_id": "mine"}
        assert ok(http.post("/reset", json=reset))["info"]["labels_used"] == 0
        assert ok(label(http, "mine", ids[:20]))["info"]["labels_used"] == 20
        again = ok(http.post("/reset", json=reset))  # the issue: 20 more rows each reset
        assert again["info"]["labels_used"] == 20
        refused = label(http, "mine", ids[20:21])
        assert (refused.status_code, refused.json()["code"]) == (422, "LABEL_BUDGET_EXCEEDED")
        assert ok(label(http, "mine", ids[:3]))["info"]["labels_used"] == 20  # seen: free
        # Another episode id of the same instance draws on the same budget.
        ok(http.post("/reset", json={**reset, "episode_id": "another"}))
        assert label(http, "another", ids[20:21]).status_code == 422
        # Another client has its own.
        other = {"X-Forwarded-For": "6.6.6.6"}
        ok(http.post("/reset", json={**reset, "episode_id": "theirs"}, headers=other))
        assert ok(label(http, "theirs", ids[20:25], **other))["info"]["labels_used"] == 5


def test_sql_settings_show_no_server_directory(live_server: LiveServer) -> None:
    text = "SELECT current_setting('allowed_paths') AS a, current_setting('secret_directory') AS b"
    with httpx.Client(base_url=live_server.url, timeout=120) as http:
        ok(http.post("/reset", json={"task_id": LABELLED, "episode_id": "sql"}))
        answers = [
            ok(http.post("/step", json={"episode_id": "sql", "operation": op, **parameters}))
            for op, parameters in (
                ("query", {"parameters": {"sql": text}}),
                ("query", {"parameters": {"sql": "SELECT value FROM duckdb_settings()"}}),
            )
        ]
    shown = json.dumps(answers)
    assert "/nonexistent" in shown  # the secret directory DuckDB is given: no real path
    for directory in (os.getcwd(), str(Path.home()), "stored_secrets", ":memory:"):
        assert directory not in shown, directory
