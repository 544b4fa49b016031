"""A committed table read out once into plain Python lists.

pandas calls cost tens of microseconds each, whatever the table's size. The observation,
the grader and the duplicate finder all read the same snapshot, taken once per table
version, so a step costs a handful of pandas calls rather than dozens.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from dataclean_env.values import MISSING, dtype_name, kind_of


def _normalise(values: list[Any]) -> list[Any]:
    # `v != v` is how NaN and NaT say they are missing; pd.NA must be caught before it.
    return [MISSING if v is None or v is pd.NA or v != v else v for v in values]


def _cells(series: pd.Series) -> list[Any]:
    """The column's cells, missing ones as MISSING. A plain numpy int or bool column cannot
    hold a missing cell, so it skips the per-cell check (nullable Int64 is not numpy's)."""
    values = series.tolist()
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return values
    return _normalise(values)


@dataclass(frozen=True)
class Snapshot:
    columns: tuple[str, ...]
    kinds: dict[str, str]
    dtype_names: dict[str, str]
    values: dict[str, list[Any]]  # missing cells are MISSING
    n_rows: int
    dtypes: dict[str, Any]  # the pandas dtype of each column (lazy operations read it)

    @classmethod
    def of(cls, table: pd.DataFrame) -> Snapshot:
        columns = tuple(table.columns)
        dtypes = table.dtypes.tolist()
        values = {c: _cells(s) for c, s in table.items()}
        return cls(
            columns=columns,
            kinds={c: kind_of(d) for c, d in zip(columns, dtypes, strict=True)},
            dtype_names={c: dtype_name(d) for c, d in zip(columns, dtypes, strict=True)},
            values=values,
            n_rows=len(table),
            dtypes=dict(zip(columns, dtypes, strict=True)),
        )

    def rows(self) -> list[tuple[Any, ...]]:
        return (
            list(zip(*(self.values[c] for c in self.columns), strict=True))
            if self.columns
            else [() for _ in range(self.n_rows)]
        )

    def duplicate_mask(self, subset: list[str] | None = None) -> list[bool]:
        """True for every row that repeats an earlier one (on `subset`, default all columns)."""
        columns = subset or list(self.columns)
        seen: set[tuple[Any, ...]] = set()
        mask = []
        for row in zip(*(self.values[c] for c in columns), strict=True):
            mask.append(row in seen)
            seen.add(row)
        return mask if columns else [i > 0 for i in range(self.n_rows)]

    def duplicate_count(self) -> int:
        """How many rows repeat an earlier one (all columns): rows less distinct rows."""
        if not self.columns:
            return max(0, self.n_rows - 1)
        return self.n_rows - len(set(zip(*(self.values[c] for c in self.columns), strict=True)))

    def missing_counts(self) -> dict[str, int]:
        # list.count runs in C and tests identity first: MISSING is one object, and no cell
        # value compares equal to it.
        return {c: self.values[c].count(MISSING) for c in self.columns}

    # Derived snapshots: an operation that knows what it changed hands the episode the new
    # snapshot directly, instead of having every column read out of pandas again.
    def with_rows(self, keep: list[int]) -> Snapshot:
        """The snapshot of the table reduced to the rows at positions `keep`, in order."""
        values = {c: [column[i] for i in keep] for c, column in self.values.items()}
        return replace(self, values=values, n_rows=len(keep))

    def renamed(self, names: list[str]) -> Snapshot:
        """The snapshot with its columns renamed positionally to `names`."""
        pairs = list(zip(self.columns, names, strict=True))
        return replace(
            self,
            columns=tuple(names),
            kinds={new: self.kinds[old] for old, new in pairs},
            dtype_names={new: self.dtype_names[old] for old, new in pairs},
            values={new: self.values[old] for old, new in pairs},
            dtypes={new: self.dtypes[old] for old, new in pairs},
        )

    def with_columns(self, changed: dict[str, pd.Series]) -> Snapshot:
        """The snapshot with the columns in `changed` (same names) replaced."""
        return self.with_values({c: (_cells(s), s.dtype) for c, s in changed.items()})

    def with_values(self, changed: dict[str, tuple[list[Any], Any]]) -> Snapshot:
        """The snapshot with the columns in `changed` replaced by (cells, pandas dtype)."""
        kinds, names, values = dict(self.kinds), dict(self.dtype_names), dict(self.values)
        dtypes = dict(self.dtypes)
        for column, (cells, dtype) in changed.items():
            kinds[column] = kind_of(dtype)
            names[column] = dtype_name(dtype)
            values[column] = cells
            dtypes[column] = dtype
        return replace(self, kinds=kinds, dtype_names=names, values=values, dtypes=dtypes)
