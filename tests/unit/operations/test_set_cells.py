"""set_cells: many cell repairs in one step, addressed and checked as set_cell addresses and
checks one, all or nothing, bounded per step; scored cell by cell (issue 39, item 1)."""

from __future__ import annotations

import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError, InvalidParameters
from dataclean_env.operations import resolve
from dataclean_env.operations.rows import MAX_CELL_ASSIGNMENTS, MAX_VALUE_CHARS
from dataclean_env.schemas import Action
from dataclean_env.table.snapshot import Snapshot
from tests.unit.operations.test_rows import KEYED, apply, table


def cell(row_id, column, value) -> dict:
    return {"row_id": row_id, "column": column, "value": value}


def test_set_cells_sets_each_cell_as_set_cell_would() -> None:
    batch = [cell(8, "name", "Bo"), cell(9, "score", 3), cell(7, "when", "2025-05-06")]
    result = apply("set_cells", {"cells": batch})
    one_by_one = table()
    for assignment in batch:
        one_by_one = apply_to(one_by_one, "set_cell", assignment)
    assert result.table.equals(one_by_one)
    assert result.table["name"].tolist() == ["Ana", "Bo", "Cy", "Bo"]  # both rows of id 8
    assert result.message == "set_cells: name (1), score (1), when (1)."
    assert Snapshot.of(result.table).values == result.snapshot.values


def apply_to(frame, name: str, parameters: dict):
    op, params = resolve(name, parameters)
    return op.apply(frame, params, KEYED).table


def test_a_text_column_is_rewritten_lazily_and_reads_back_the_same() -> None:
    result = apply("set_cells", {"cells": [cell(7, "name", None), cell(9, "name", 12)]})
    assert result.snapshot.values["name"][0:3] == [result.snapshot.values["name"][0], "Bo", "12"]
    assert Snapshot.of(result.table).values == result.snapshot.values
    assert result.table["name"].isna().tolist() == [True, False, False, False]


def test_setting_cells_to_what_they_hold_changes_nothing() -> None:
    frame = table()
    op, params = resolve("set_cells", {"cells": [cell(7, "name", "Ana")]})
    result = op.apply(frame, params, KEYED)
    assert result.output is frame
    assert result.message == "set_cells: no cell changed."


@pytest.mark.parametrize(
    "cells",
    [
        [],
        [cell(7, "name", "x")] * (MAX_CELL_ASSIGNMENTS + 1),
        [cell(7, "name", "x" * (MAX_VALUE_CHARS + 1))],
        [cell(7, "name", "x"), cell("7", "name", "y")],  # one cell set twice
        [cell(7, "name", "x"), cell(99, "name", "y")],  # an unknown row
        [cell(7, "name", "x"), cell(7, "nope", "y")],
        [cell(7, "name", "x"), cell(7, "id", 1)],  # the protected key
        [cell(7, "name", "x"), cell(7, "score", "high")],
        [cell(7, "name", "x"), cell(7, "count", None)],
        [cell(7, "name", "x"), cell(7, "when", "May 6")],
    ],
)
def test_a_bad_batch_is_refused_whole(cells) -> None:
    frame = table()
    with pytest.raises(InvalidParameters):
        op, params = resolve("set_cells", {"cells": cells})
        op.apply(frame, params, KEYED)
    assert frame.equals(table())


def test_in_an_episode_a_batch_scores_what_its_cells_score_one_by_one(registry) -> None:
    """Cell by cell: the repair figures after one set_cells equal those after the same
    cells set by set_cell steps; a refused batch changes nothing and says why."""
    batched = Episode("batch", registry.make("rayyan", None))
    single = Episode("single", registry.make("rayyan", None))
    ids = batched.snapshot.values["id"]
    # two cells the clean file holds (-1 for an unknown volume) and one it does not
    batch = [
        cell(ids[1], "article_jvolumn", "-1"),
        cell(ids[1], "article_jissue", "-1"),
        cell(ids[0], "article_title", "wrong"),
    ]
    result = batched.step(Action(operation="set_cells", parameters={"cells": batch}))
    for assignment in batch:
        single.step(Action(operation="set_cell", parameters=assignment))
    assert result.info["repair"] == single.info()["repair"]
    assert result.info["repair"]["cells_changed"] == 3
    assert batched.snapshot.values == single.snapshot.values
    before = batched.snapshot
    with pytest.raises(EnvError) as refused:
        batched.step(
            Action(operation="set_cells", parameters={"cells": [cell(ids[2], "id", 1)] * 2})
        )
    assert (refused.value.status, refused.value.code) == (422, "INVALID_PARAMETERS")
    assert batched.snapshot is before and batched.step_count == 1
