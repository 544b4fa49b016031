"""The damaging strategies of issue 40, replayed over HTTP against a real uvicorn: none of
them scores above doing nothing.

* Audit: a `fix` that drops the gold rows holding two or more wrong cells (a lost row used
  to count as one error while its wrong cells counted as k: fix_score 0.0001 -> 0.10, 0.13,
  0.09 on train seeds 0, 2, 3).
* Orders: `UPDATE t SET status = 'returned'` (train seed 5) leaves more cells wrong than it
  fixes (306 -> 351) and used to raise the score by 0.023.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.grading.truth import ROW
from dataclean_env.schemas import Action
from tests.support import ok

AUDIT_SEEDS = [0, 2, 3]


def play(url: str, task_id: str, seed: int, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """The last response of an episode that plays `actions` from a reset."""
    episode_id = f"damage-{task_id}-{seed}-{len(actions)}"
    with httpx.Client(base_url=url, timeout=60) as http:
        body = {"seed": seed, "split": "train", "episode_id": episode_id}
        result = ok(http.post(f"/reset/{task_id}", json=body))
        for action in actions:
            result = ok(http.post("/step", json={"episode_id": episode_id, **action}))
    return result


def audit_actions(fixes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"operation": "audit", "parameters": {"categories": []}},
        {"operation": "identify", "parameters": {"cells": []}},
        {"operation": "fix", "parameters": {"operations": fixes}},
        {"operation": "validate", "parameters": {"issues_remaining": 0}},
    ]


def rows_with_wrong_cells(registry, seed: int, at_least: int) -> list[str]:
    """Gold rows holding `at_least` wrong cells (what an attacker who guessed would drop)."""
    truth = registry.make("audit_pipeline", seed, "train").grader.truth
    per_row = Counter(row for row, column in truth.errors if column != ROW)
    return sorted(row for row, count in per_row.items() if count >= at_least)


@pytest.mark.parametrize("seed", AUDIT_SEEDS)
def test_dropping_audit_rows_that_hold_several_wrong_cells_does_not_pay(
    live_server, registry, seed: int
) -> None:
    rows = rows_with_wrong_cells(registry, seed, at_least=2)
    assert rows  # the strategy has rows to drop on these seeds
    idle = play(live_server.url, "audit_pipeline", seed, audit_actions([]))
    drop = [{"operation": "drop_rows", "parameters": {"row_ids": rows}}]
    dropped = play(live_server.url, "audit_pipeline", seed, audit_actions(drop))
    assert idle["done"] and dropped["done"]
    assert idle["reward"]["fix_score"] == 0.0001
    assert dropped["reward"]["fix_score"] == 0.0001
    assert dropped["reward"]["total"] <= idle["reward"]["total"]


def test_a_blanket_update_that_leaves_more_cells_wrong_does_not_pay_on_orders(
    live_server, registry
) -> None:
    update = {"operation": "sql", "parameters": {"sql": "UPDATE t SET status = 'returned'"}}
    start = play(live_server.url, "orders", 5, [])
    after = play(live_server.url, "orders", 5, [update])
    # The same step in-process: it really leaves more cells wrong (306 -> 351).
    task = registry.make("orders", 5, "train")
    grader = task.grader

    episode = Episode("orders-update", task)
    wrong_before = grader.cells_wrong(episode.snapshot)
    episode.step(Action(**update))
    assert (wrong_before, grader.cells_wrong(episode.snapshot)) == (306, 351)
    assert after["reward"]["total"] < start["reward"]["total"]
