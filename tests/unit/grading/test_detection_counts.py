"""`CellRepairGrader.detection`: a changed cell is a flagged one, scored against the errors."""

from __future__ import annotations

import pandas as pd

from dataclean_env.grading.cell_repair import CellRepairGrader, RepairCounts
from dataclean_env.table.snapshot import Snapshot

CLEAN = pd.DataFrame({"id": ["1", "2", "3", "4"], "city": ["Oslo", "Rome", "Lima", "Kiev"]})
DIRTY = pd.DataFrame({"id": ["1", "2", "3", "4"], "city": ["Olso", "Rmoe", "Lima", "Kiev"]})


def grader() -> CellRepairGrader:
    return CellRepairGrader(DIRTY, CLEAN, "id", {"id": "id", "city": "city"})


def test_a_wrong_repair_is_detected_but_not_corrected_and_a_broken_cell_is_neither() -> None:
    # Row 1 repaired, row 2 changed to another wrong value, row 3 (right) broken.
    after = DIRTY.assign(city=["Oslo", "Rmo", "Lim", "Kiev"])
    snapshot = Snapshot.of(after)
    assert grader().detection(snapshot) == RepairCounts(errors=2, changed=3, repaired=2)
    assert grader().counts(snapshot) == RepairCounts(errors=2, changed=3, repaired=1)


def test_nothing_changed_flags_nothing() -> None:
    counts = grader().detection(Snapshot.of(DIRTY))
    assert counts == RepairCounts(errors=2, changed=0, repaired=0)
    assert counts.scores() == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_a_deleted_row_the_clean_table_lacks_is_flagged_and_found() -> None:
    # Row 5 is a further report of row 1 (a row the clean table lacks): its one graded cell
    # is an error; deleting the row flags and finds it, as the correction counts repair it.
    extra = pd.concat([DIRTY, pd.DataFrame({"id": ["5"], "city": ["Oslo"]})], ignore_index=True)
    repairer = CellRepairGrader(extra, CLEAN, "id", {"id": "id", "city": "city"})
    deleted = Snapshot.of(extra[extra["id"] != "5"])
    assert repairer.counts(deleted) == RepairCounts(errors=3, changed=1, repaired=1)
    assert repairer.detection(deleted) == RepairCounts(errors=3, changed=1, repaired=1)
    # A row the table gains is flagged, and is no error.
    gained = pd.concat([extra, pd.DataFrame({"id": ["6"], "city": ["Bern"]})], ignore_index=True)
    assert repairer.detection(Snapshot.of(gained)) == RepairCounts(errors=3, changed=1, repaired=0)
