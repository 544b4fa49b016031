"""The snapshot's fast counts (used by every observation) agree with their row-by-row form."""

from __future__ import annotations

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import MISSING

CELLS = st.sampled_from([1, 2, None, "a", "b", float("nan"), 2.0, "NULL", ""])


def test_counts_of_a_small_table() -> None:
    table = pd.DataFrame(
        {
            "a": [1, 1, None, 1, None],
            "b": ["x", "x", None, "y", None],
            "c": [1.5, 1.5, 2.0, 1.5, 2.0],
        }
    )
    snapshot = Snapshot.of(table)
    assert snapshot.missing_counts() == {"a": 2, "b": 2, "c": 0}
    assert snapshot.duplicate_count() == 2  # row 1 repeats row 0, row 4 repeats row 2
    assert Snapshot.of(pd.DataFrame(index=range(3))).duplicate_count() == 2
    assert Snapshot.of(pd.DataFrame()).duplicate_count() == 0


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 3).flatmap(
        lambda w: st.lists(st.lists(CELLS, min_size=w, max_size=w), max_size=25)
    )
)
def test_fast_counts_equal_the_row_by_row_counts(rows: list[list]) -> None:
    width = len(rows[0]) if rows else 0
    table = (
        pd.DataFrame(rows, columns=[f"c{i}" for i in range(width)])
        if width
        else pd.DataFrame(index=range(len(rows)))
    )
    snapshot = Snapshot.of(table)
    assert snapshot.duplicate_count() == sum(snapshot.duplicate_mask())
    assert snapshot.missing_counts() == {
        c: sum(1 for v in snapshot.values[c] if v is MISSING) for c in snapshot.columns
    }
