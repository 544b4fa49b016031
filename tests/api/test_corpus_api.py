"""A corpus table served over real HTTP (uvicorn on 127.0.0.1): listed with its version and
licence, reset by seed and split, graded cell by cell; a reset with an unknown split is a
4xx with its code and starts nothing."""

from __future__ import annotations

import httpx

from dataclean_env.corpus.tables import load_card, load_table
from dataclean_env.tasks.corpus import CorpusFamily
from tests.support import ok
from tests.web import LiveServer


def test_a_corpus_instance_over_http() -> None:
    with LiveServer() as server, httpx.Client(base_url=server.url, timeout=60) as http:
        listed = {t["task_id"]: t for t in ok(http.get("/tasks"))["tasks"]}
        gapminder = listed["corpus_gapminder"]
        assert (gapminder["family"], gapminder["version"]) == ("corpus", "corpus_gapminder-v3")
        assert load_card("gapminder")["licence"] in gapminder["description"]
        body = ok(
            http.post(
                "/reset/corpus_gapminder",
                json={
                    "seed": 1,
                    "split": "test",
                    "episode_id": "corpus-1",
                    "reward_mode": "absolute",
                },
            )
        )
        assert body["reward"]["total"] == 0.0001  # nothing repaired yet
        first = body["observation"]["sample_rows"][0]
        assert set(first) == {"row_id", *load_card("gapminder")["columns"]}
        refused = http.post("/reset/corpus_gapminder", json={"seed": 1, "split": "secret"})
        assert (refused.status_code, refused.json()["code"]) == (422, "INVALID_ACTION")
        # The first wrong cell of the same instance made in-process, set to its clean text.
        task = CorpusFamily().make("corpus_gapminder", 1, "test")
        clean = load_table("gapminder").clean
        dirty = task.dirty.sort_values("row_id").reset_index(drop=True)
        wrong = [
            (i + 1, column)
            for column in clean.columns
            for i, (was, now) in enumerate(zip(clean[column], dirty[column], strict=True))
            if was != now
        ]
        row_id, column = wrong[0]
        step = ok(
            http.post(
                "/step/corpus_gapminder",
                json={
                    "episode_id": "corpus-1",
                    "operation": "set_cell",
                    "parameters": {
                        "row_id": row_id,
                        "column": column,
                        "value": clean.at[row_id - 1, column],
                    },
                },
            )
        )
        assert step["info"]["repair"] == {
            "precision": 1.0,
            "recall": 1 / len(wrong),
            "f1": 2 / (1 + len(wrong)),
            "cells_changed": 1,
        }
