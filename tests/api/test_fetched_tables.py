"""A table fetched by `dataclean-env-datasets` (tasks/fetch.py) from a local stand-in
upstream is served as a task by a real uvicorn whose EXTRA_DATASETS names the destination,
and graded cell by cell like any real table."""

from __future__ import annotations

import httpx

from dataclean_env.settings import Settings
from dataclean_env.tasks.fetch import main
from tests.support import ok
from tests.upstream_pair import upstream_manifest
from tests.web import LiveServer


def test_a_fetched_table_is_served_and_graded_by_a_live_server(tmp_path) -> None:
    dest = tmp_path / "fetched"
    manifest = upstream_manifest(tmp_path)
    assert main(["--manifest", str(manifest), "--to", str(dest), "fetch", "cities"]) == 0
    with (
        LiveServer(Settings(extra_datasets=str(dest))) as server,
        httpx.Client(base_url=server.url, timeout=60) as http,
    ):
        listed = {t["task_id"]: t for t in ok(http.get("/tasks"))["tasks"]}
        assert (listed["cities"]["family"], listed["cities"]["max_steps"]) == ("custom", 5)
        assert "cities-labelled" in listed
        ok(http.post("/reset/cities", json={"episode_id": "fetched"}))
        step = ok(
            http.post(
                "/step/cities",
                json={
                    "episode_id": "fetched",
                    "operation": "set_cell",
                    "parameters": {"row_id": 1, "column": "city", "value": "Boston"},
                },
            )
        )
        # One of the pair's two wrong cells (Bostn, tx) repaired, nothing broken.
        assert step["info"]["repair"] == {
            "precision": 1.0,
            "recall": 0.5,
            "f1": 2 / 3,
            "cells_changed": 1,
        }
