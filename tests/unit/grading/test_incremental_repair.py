"""A set_cells step is graded by the cells it touched (issue 39, item 6): the grader updates
the counts it held for the column's previous list by those cells alone, and the figures
equal a full grading of the same table, step after step."""

from __future__ import annotations

import random

from dataclean_env.engine.episode import Episode
from dataclean_env.schemas import Action
from dataclean_env.table.limits import TableBudget, default_limits
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.tasks.custom import load_custom_task
from tests.support import ROOT

RAYYAN = ROOT / "datasets" / "rayyan"


def test_edited_columns_are_graded_by_their_touched_cells_and_agree_with_a_full_grading(
    registry,
) -> None:
    _, _, fresh_grader, plan = load_custom_task(RAYYAN)
    episode = Episode("edits", registry.make("rayyan", None))
    pick = random.Random(39)
    ids = episode.snapshot.values["id"]
    columns = [c for c in episode.snapshot.columns if c != "id"]
    # the plan's own repairs, then batches of right and wrong values mixed, undoing some
    batches = [step["parameters"]["cells"] for step in plan if step["operation"] == "set_cells"]
    for _ in range(4):
        batches.append(
            [
                {"row_id": row, "column": pick.choice(columns), "value": pick.choice(["", "x"])}
                for row in pick.sample(ids, 50)
            ]
        )
    for batch in batches:
        episode.step(Action(operation="set_cells", parameters={"cells": batch}))
        after = episode.snapshot
        edited = set(after.edits)
        assert edited and edited <= {a["column"] for a in batch}
        grader = episode.task.grader
        for column in grader.columns:
            name = column.dirty_name
            if name in edited:
                alignment = grader._alignment_of(after)
                assert (
                    grader._edited_counts(
                        column, after.edits[name], after.values[name], after.kinds[name], alignment
                    )
                    is not None
                )  # graded from the previous counts and the touched cells
        full = fresh_grader.counts(Snapshot.of(episode.table))
        assert grader.counts(after) == full
        assert TableBudget(default_limits(), Snapshot.of(episode.table)).total == (
            episode.committed.budget.total
        )
