"""A committed table read out once into plain Python lists.

pandas calls cost tens of microseconds each, whatever the table's size. The observation,
the grader and the duplicate finder all read the same snapshot, taken once per table
version, so a step costs a handful of pandas calls rather than dozens.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, cast

import numpy as np
import pandas as pd

from dataclean_env.table.values import MISSING, Kind, dtype_name, kind_of


def _normalise(values: list[Any]) -> list[Any]:
    # `v != v` is how NaN and NaT say they are missing; pd.NA must be caught before it.
    return [MISSING if v is None or v is pd.NA or v != v else v for v in values]


def _cells(series: pd.Series) -> list[Any]:
    """The column's cells, missing ones as MISSING. A plain numpy int or bool column cannot
    hold a missing cell, so it skips the per-cell check (nullable Int64 is not numpy's);
    float and text columns find theirs with `isna`, in C; a date column makes one
    Timestamp per distinct date (making them is what costs)."""
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return series.tolist()
    if isinstance(series.array, pd.arrays.DatetimeArray):  # datetime64, with or without tz
        return _date_cells(series)
    if (isinstance(dtype, np.dtype) and dtype.kind == "f") or isinstance(dtype, pd.StringDtype):
        # Their cells are numbers (or text) and NaN (or pd.NA): `isna` says which.
        values = series.tolist()
        for position in np.flatnonzero(series.isna().to_numpy()).tolist():
            values[position] = MISSING
        return values
    return _normalise(series.tolist())


def _date_cells(series: pd.Series) -> list[Any]:
    instants = series.array.asi8  # NaT is one more value here
    distinct, first, which = np.unique(instants, return_index=True, return_inverse=True)
    if 2 * len(distinct) > len(instants):
        return _normalise(series.tolist())
    stamps = _normalise(series.iloc[first].tolist())
    return list(map(stamps.__getitem__, which.tolist()))


class Edit(NamedTuple):
    """How a step made a column's values list `after`: from `before`, by changing the cells
    at positions `at` (and no other). The grader and the text budget then update what they
    counted on `before` by those cells alone."""

    before: list[Any]
    after: list[Any]
    at: tuple[int, ...]


@dataclass(frozen=True)
class Snapshot:
    columns: tuple[str, ...]
    kinds: dict[str, Kind]
    dtype_names: dict[str, str]
    values: dict[str, list[Any]]  # missing cells are MISSING
    n_rows: int
    dtypes: dict[str, Any]  # the pandas dtype of each column (lazy operations read it)
    # Columns the step that made this snapshot edited cell by cell (see `Edit`); a reader
    # checks `edit.after is values[column]`, so an edit carried along by a later
    # derivation is never mistaken for that derivation's own.
    edits: Mapping[str, Edit] = field(default_factory=dict)

    @classmethod
    def of(cls, table: pd.DataFrame) -> Snapshot:
        columns = tuple(table.columns)
        dtypes = table.dtypes.tolist()
        # Headers are text in every table the engine holds (loaders read CSV headers, and
        # episode._servable refuses a step that makes them anything else).
        values = {cast(str, c): _cells(s) for c, s in table.items()}
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
        """True for every row that repeats an earlier one (on `subset`, default all columns).

        Only a row whose first column's value repeats can repeat a row, so whole rows are
        hashed for those alone (on a keyed table, the few true duplicates)."""
        columns = subset or list(self.columns)
        if not columns:
            return [i > 0 for i in range(self.n_rows)]
        first = self.values[columns[0]]
        counts = Counter(first)
        mask = [False] * self.n_rows
        if len(counts) == len(first):
            return mask
        repeats = np.fromiter(map(counts.__getitem__, first), dtype=np.int64, count=len(first))
        candidates = np.flatnonzero(repeats > 1).tolist()  # two at least
        pick = operator.itemgetter(*candidates)
        seen: set[tuple[Any, ...]] = set()
        rows = zip(*(pick(self.values[c]) for c in columns), strict=True)
        for i, row in zip(candidates, rows, strict=True):
            mask[i] = row in seen
            seen.add(row)
        return mask

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
        if not keep:
            return replace(self, values={c: [] for c in self.values}, n_rows=0, edits={})
        pick = operator.itemgetter(*keep)  # one C call per column
        if len(keep) == 1:
            values = {c: [pick(column)] for c, column in self.values.items()}
        else:
            values = {c: list(pick(column)) for c, column in self.values.items()}
        return replace(self, values=values, n_rows=len(keep), edits={})

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
            edits={},
        )

    def with_columns(self, changed: dict[str, pd.Series]) -> Snapshot:
        """The snapshot with the columns in `changed` (same names) replaced."""
        return self.with_values({c: (_cells(s), s.dtype) for c, s in changed.items()})

    def with_values(
        self, changed: dict[str, tuple[list[Any], Any]], edits: Mapping[str, Edit] | None = None
    ) -> Snapshot:
        """The snapshot with the columns in `changed` replaced by (cells, pandas dtype), and
        the `edits` that made them, if known."""
        kinds, names, values = dict(self.kinds), dict(self.dtype_names), dict(self.values)
        dtypes = dict(self.dtypes)
        for column, (cells, dtype) in changed.items():
            kinds[column] = kind_of(dtype)
            names[column] = dtype_name(dtype)
            values[column] = cells
            dtypes[column] = dtype
        return replace(
            self, kinds=kinds, dtype_names=names, values=values, dtypes=dtypes, edits=edits or {}
        )
