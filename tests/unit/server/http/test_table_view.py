"""The viewer's page of a table beside its dirty table: row and column matching, changed
cells, statistics, paging, and the difficulty a generated instance will have."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dataclean_env.server.http.table_view import MAX_PAGE, row_origins, table_page
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.tasks.claim_families import GENERATED as CLAIMS_FAMILIES
from dataclean_env.tasks.claim_families import generated_instance
from dataclean_env.tasks.generated import FAMILIES, instance, predicted_difficulty


def snap(**columns: list) -> Snapshot:
    return Snapshot.of(pd.DataFrame(columns))


DIRTY = snap(
    id=[1, 2, 2, 3, 4],
    name=[" ann", "bob", "Bob ", None, "dan"],
    age=["30", "41", "41", "x", None],
)


def test_unchanged_table_has_no_changed_cells_and_exact_stats() -> None:
    page = table_page(DIRTY, DIRTY, "id", 0, 50)
    assert page["columns"] == [
        {"name": "id", "dtype": "int64", "missing": 0, "distinct": 4},
        {"name": "name", "dtype": "object", "missing": 1, "distinct": 4},
        {"name": "age", "dtype": "object", "missing": 1, "distinct": 3},
    ]
    assert page["total_rows"] == page["dirty_rows"] == 5
    assert [r["cells"] for r in page["rows"]] == [
        [1, " ann", "30"],
        [2, "bob", "41"],
        [2, "Bob ", "41"],
        [3, None, "x"],  # missing is null, not the observation's "NULL"
        [4, "dan", None],
    ]
    assert all(r["changed"] == {} and not r["new"] for r in page["rows"])


def test_changed_cells_carry_their_dirty_value_matched_by_key() -> None:
    # The second copy of id 2 dropped; names stripped; one age filled; the table is re-read
    # as the engine would after the step.
    current = snap(id=[1, 2, 3, 4], name=["ann", "bob", None, "dan"], age=["30", "41", "x", "35"])
    page = table_page(current, DIRTY, "id", 0, 50)
    assert [r["changed"] for r in page["rows"]] == [{"name": " ann"}, {}, {}, {"age": None}]


def test_near_duplicate_copies_match_their_own_dirty_rows() -> None:
    # Both copies of id 2 kept; the second must compare with the second dirty copy.
    current = snap(
        id=[1, 2, 2, 3, 4], name=[" ann", "bob", "Bob", None, "dan"], age=DIRTY.values["age"]
    )
    assert row_origins(current, DIRTY, "id") == [0, 1, 2, 3, 4]
    page = table_page(current, DIRTY, "id", 0, 50)
    assert [r["changed"] for r in page["rows"]] == [{}, {}, {"name": "Bob "}, {}, {}]


def test_rows_without_a_key_are_aligned_as_an_ordered_subsequence() -> None:
    # No key: the duplicate (row 2) and row 3 dropped, row 4 edited; renamed headers.
    current = snap(ID=[1, 2, 4], NAME=[" ann", "bob", "Dan"], AGE=["30", "41", None])
    assert row_origins(current, DIRTY, None) == [0, 1, 4]
    page = table_page(current, DIRTY, None, 0, 50)
    assert [r["changed"] for r in page["rows"]] == [{}, {}, {"NAME": "dan"}]
    assert page["key"] is None


def test_exact_duplicates_match_the_first_copy() -> None:
    dirty = snap(a=[1, 1, 2])
    assert row_origins(snap(a=[1, 2]), dirty, None) == [0, 2]


def test_a_type_change_is_a_change_and_keys_unknown_to_dirty_are_new() -> None:
    dirty = snap(id=[1, 2], n=["7", "8"])
    current = Snapshot.of(pd.DataFrame({"id": [1, 9], "n": [7, 8]}))
    page = table_page(current, dirty, "id", 0, 50)
    assert page["rows"][0]["changed"] == {"n": "7"}
    assert page["rows"][1]["new"] and page["rows"][1]["changed"] == {}


def test_paging_is_bounded() -> None:
    big = snap(id=list(range(500)), v=[float(i) if i % 7 else np.nan for i in range(500)])
    page = table_page(big, big, "id", 490, 50)
    assert [r["position"] for r in page["rows"]] == list(range(490, 500))
    assert page["columns"][1]["missing"] == 72
    assert len(table_page(big, big, "id", 0, 10_000)["rows"]) == MAX_PAGE
    assert table_page(big, big, "id", 900, 50)["rows"] == []


@pytest.mark.parametrize("family", list(FAMILIES))
def test_predicted_difficulty_is_the_instance_difficulty(family: str) -> None:
    for split in ("train", "eval", "test"):
        for seed in range(4):
            spec, generated, _ = instance(family, split, seed)
            assert predicted_difficulty(family, split, seed) == generated.difficulty
            assert spec.difficulty == generated.difficulty


@pytest.mark.parametrize("family", list(CLAIMS_FAMILIES))
def test_predicted_difficulty_is_a_claims_instance_difficulty(family: str) -> None:
    for split in ("train", "eval", "test"):
        for seed in range(4):
            spec = generated_instance(family, split, seed)[0]
            assert predicted_difficulty(family, split, seed) == spec.difficulty
