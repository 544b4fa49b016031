"""The damaging strategies of issue 40, replayed over HTTP against a real uvicorn: none of
them scores above doing nothing.

* Audit: a `fix` that drops the gold rows holding two or more wrong cells (a lost row used
  to count as one error while its wrong cells counted as k: fix_score 0.0001 -> 0.10, 0.13,
  0.09 on train seeds 0, 2, 3).
* Orders: `UPDATE t SET status = 'returned'` (train seed 5) leaves more cells wrong than it
  fixes (306 -> 351) and used to raise the score by 0.023.
* Detection: reporting every cell kept up to 0.002 above doing nothing (grader-2's
  over-report cap); audit: claiming all seven categories scored their F1. Under grader-3
  both score exactly what doing nothing does.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.grading.truth import ERROR_TYPES, ROW
from dataclean_env.operations.claims import MAX_CLAIMS
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


def audit_actions(
    fixes: list[dict[str, Any]],
    categories: tuple[str, ...] = (),
    cells: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    return [
        {"operation": "audit", "parameters": {"categories": list(categories)}},
        {"operation": "identify", "parameters": {"cells": cells or []}},
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


def every_cell(registry, task_id: str, seed: int) -> list[dict[str, Any]]:
    """Every cell of the instance's dirty table, as claims (what the agent sees suffices)."""
    task = registry.make(task_id, seed, "train")
    snapshot = Episode("look", task).snapshot
    (key,) = task.spec.protected_columns
    columns = [c for c in snapshot.columns if c != key]
    return [{"row_id": r, "column": c} for r in snapshot.values[key] for c in columns]


def test_reporting_every_cell_of_a_detection_table_scores_what_doing_nothing_does(
    live_server, registry
) -> None:
    # train seed 2: 94 errors among 1,137 units, where grader-2 kept 0.0021
    cells = every_cell(registry, "error_detection", 2)
    reports = [
        {"operation": "report_errors", "parameters": {"cells": cells[i : i + MAX_CLAIMS]}}
        for i in range(0, len(cells), MAX_CLAIMS)
    ]
    idle = play(live_server.url, "error_detection", 2, [{"operation": "finish"}])
    claimed = play(live_server.url, "error_detection", 2, [*reports, {"operation": "finish"}])
    assert idle["done"] and claimed["done"]
    assert claimed["reward"]["detection_recall"] == 0.9999  # every error was claimed
    assert claimed["reward"]["total"] == idle["reward"]["total"] == 0.0001
    assert claimed["reward"]["penalty"] == 0.9999  # precision at chance: all of it scaled away


def test_claiming_all_seven_categories_and_every_cell_in_an_audit_does_not_pay(
    live_server, registry
) -> None:
    # train seed 0 holds 3 of the 7 categories: grader-2's F1 gave claiming all 0.6
    cells = every_cell(registry, "audit_pipeline", 0)[:MAX_CLAIMS]
    idle = play(live_server.url, "audit_pipeline", 0, audit_actions([]))
    claimed = play(live_server.url, "audit_pipeline", 0, audit_actions([], ERROR_TYPES, cells))
    assert idle["done"] and claimed["done"]
    assert claimed["reward"]["audit_score"] == 0.0001
    assert claimed["reward"]["identify_score"] == 0.0001
    assert claimed["reward"]["total"] == idle["reward"]["total"] == 0.0001
