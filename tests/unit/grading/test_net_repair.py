"""Real tables' reward total is net repair, (repaired - wrong changes) / errors, at least 0:
a step whose wrong changes outnumber its repairs lowers it where F1 would rise, dropping
every row scores the floor, the clean table the ceiling."""

from __future__ import annotations

import pandas as pd

from dataclean_env.grading.cell_repair import CellRepairGrader, RepairCounts
from dataclean_env.table.snapshot import Snapshot

ROWS = 100
CLEAN = pd.DataFrame({"id": [str(i) for i in range(ROWS)], "city": [f"c{i}" for i in range(ROWS)]})
# Rows 0-29 hold a wrong city; 5 rows the clean table lacks were added.
DIRTY = pd.concat(
    [
        CLEAN.assign(city=[f"x{i}" if i < 30 else f"c{i}" for i in range(ROWS)]),
        pd.DataFrame({"id": [f"a{i}" for i in range(5)], "city": ["junk"] * 5}),
    ],
    ignore_index=True,
)


def grader() -> CellRepairGrader:
    return CellRepairGrader(DIRTY, CLEAN, "id", {"id": "id", "city": "city"})


def with_cities(cities: dict[int, str]) -> Snapshot:
    table = DIRTY.copy()
    for row, city in cities.items():
        table.loc[row, "city"] = city
    return Snapshot.of(table)


def test_net_repair_charges_a_wrong_change_what_a_right_fix_earns() -> None:
    assert RepairCounts(errors=30, changed=36, repaired=25).net_repair == 14 / 30
    assert RepairCounts(errors=30, changed=40, repaired=10).net_repair == 0.0
    assert RepairCounts(errors=0, changed=3, repaired=0).net_repair == 0.0


def test_a_step_fixing_10_cells_and_breaking_11_lowers_net_repair_while_f1_rises() -> None:
    fixed_15 = {row: f"c{row}" for row in range(15)}
    before = grader().counts(with_cities(fixed_15))
    # 10 more errors fixed, 11 right cells (rows 30-40) broken.
    step = {**fixed_15, **{row: f"c{row}" for row in range(15, 25)}}
    step |= {row: "broken" for row in range(30, 41)}
    after = grader().counts(with_cities(step))
    errors = 30 + 5  # the 5 added rows' cells are errors too
    assert before == RepairCounts(errors=errors, changed=15, repaired=15)
    assert after == RepairCounts(errors=errors, changed=36, repaired=25)
    assert (before.net_repair, after.net_repair) == (15 / 35, 14 / 35)
    assert (before.f1, after.f1) == (30 / 50, 50 / 71)
    assert grader().reward(with_cities(step), [], 30)["total"] == 14 / 35


def test_dropping_every_row_scores_the_floor_though_it_repairs_the_added_rows() -> None:
    empty = Snapshot.of(DIRTY.iloc[0:0])
    counts = grader().counts(empty)
    assert counts == RepairCounts(errors=35, changed=105, repaired=5)
    assert counts.f1 == 10 / 140 and counts.net_repair == 0.0
    reward = grader().reward(empty, [], 30)
    assert (reward["total"], reward["net_repair"], reward["f1"]) == (0.0001, 0.0001, 10 / 140)


def test_the_clean_table_scores_the_ceiling_and_doing_nothing_the_floor() -> None:
    clean = grader().reward(Snapshot.of(CLEAN), [], 30)
    assert (clean["total"], clean["net_repair"], clean["f1"]) == (0.9999, 0.9999, 0.9999)
    nothing = grader().reward(Snapshot.of(DIRTY), [], 30)
    assert nothing == {
        "total": 0.0001,
        "net_repair": 0.0001,
        "precision": 0.0001,
        "recall": 0.0001,
        "f1": 0.0001,
        "penalty": 0.0001,
    }
