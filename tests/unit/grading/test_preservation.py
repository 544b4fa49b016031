"""Exact values of the generated families' grader (`PreservationGrader`) on a hand-made
table: every wrong cell costs what a fix earns, wherever it came from."""

from __future__ import annotations

import pandas as pd
import pytest

from dataclean_env.grading.preservation import PreservationGrader
from dataclean_env.table.snapshot import Snapshot

GOLD = pd.DataFrame(
    {
        "id": [1, 2, 3, 4],
        "status": ["paid", "paid", "paid", "returned"],
        "qty": [1, 2, 3, 4],
    }
)
# Two wrong cells (status of 1, qty of 2) of eight, and a copy of row 4.
DIRTY = pd.DataFrame(
    {
        "id": [1, 2, 3, 4, 4],
        "status": ["PAID", "paid", "paid", "returned", "returned"],
        "qty": [1, 20, 3, 4, 4],
    }
)


def grade(table: pd.DataFrame) -> tuple[dict[str, float], float, int]:
    grader = PreservationGrader.for_task(DIRTY, GOLD, "id")
    snapshot = Snapshot.of(table)
    scores = grader.components(snapshot)
    return scores, grader.combine(scores, [], 10)["total"], grader.cells_wrong(snapshot)


def test_doing_nothing_earns_only_the_dirty_tables_row_integrity() -> None:
    scores, total, wrong = grade(DIRTY)
    assert scores == {
        "repair_score": 0.0,
        "preservation_score": 1.0,
        "row_integrity_score": 1 - 1 / 9,
    }
    assert total == pytest.approx(0.2 * (1 - 1 / 9))
    assert wrong == 2


def test_the_clean_table_scores_one() -> None:
    scores, total, wrong = grade(GOLD)
    assert scores == {"repair_score": 1.0, "preservation_score": 1.0, "row_integrity_score": 1.0}
    assert (total, wrong) == (pytest.approx(0.9999), 0)


def test_a_blanket_overwrite_never_earns_more_than_the_cells_it_fixes_net() -> None:
    _, before, _ = grade(DIRTY)
    # status := 'paid' everywhere: fixes row 1, breaks row 4 (its first copy is graded)
    blanket = DIRTY.assign(status="paid")
    scores, total, wrong = grade(blanket)
    assert wrong == 2 - 1 + 1
    assert scores["repair_score"] == 0.0
    assert scores["preservation_score"] == pytest.approx(5 / 6)
    assert total == pytest.approx(before)
    overwrite = DIRTY.assign(status="returned")  # fixes nothing, breaks rows 2 and 3
    scores, total, wrong = grade(overwrite)
    assert wrong == 2 + 2
    assert scores["repair_score"] == -1.0
    assert total < before


def test_a_lost_row_costs_every_cell_it_held() -> None:
    _, before, _ = grade(DIRTY)
    lost = DIRTY[DIRTY["id"] != 2]  # row 2: one wrong cell (qty), one right (status)
    scores, total, wrong = grade(lost)
    assert wrong == 3
    assert scores["repair_score"] == pytest.approx(1 - 3 / 2)
    assert scores["row_integrity_score"] == pytest.approx(1 - 2 / 8)
    assert total < before


def test_a_table_wrecked_past_its_dirty_errors_floors_repair_at_minus_one() -> None:
    scores, total, wrong = grade(DIRTY.iloc[0:0])
    assert wrong == 8
    assert scores["repair_score"] == -1.0
    assert total == 0.0001
