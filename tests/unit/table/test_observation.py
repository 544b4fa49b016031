"""The observation's duplicate count (a fast path for large keyed tables) agrees with the
snapshot's duplicate mask."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dataclean_env.table.observation import duplicate_count
from dataclean_env.table.snapshot import Snapshot


def test_duplicate_count_equals_the_duplicate_mask() -> None:
    rng = np.random.default_rng(3)
    for trial in range(60):
        rows = int(rng.integers(0, 30))
        table = pd.DataFrame(
            {
                "a": rng.integers(0, 1 + trial % 6, rows),
                "b": rng.choice(["x", "y", None], rows),
                "c": rng.choice([1.5, np.nan], rows),
            }
        )
        snapshot = Snapshot.of(table)
        assert duplicate_count(snapshot) == sum(snapshot.duplicate_mask()), trial


def test_exact_counts() -> None:
    table = pd.DataFrame({"k": [1, 1, 2, 1, 2], "v": ["a", "a", "b", "c", "b"]})
    assert duplicate_count(Snapshot.of(table)) == 2
    assert duplicate_count(Snapshot.of(table.assign(k=[1, 2, 3, 4, 5]))) == 0
    assert duplicate_count(Snapshot.of(pd.DataFrame(index=range(3)))) == 2
