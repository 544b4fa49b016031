"""A committed table read out once into plain Python lists.

pandas calls cost tens of microseconds each, whatever the table's size. The observation,
the grader and the duplicate finder all read the same snapshot, taken once per table
version, so a step costs a handful of pandas calls rather than dozens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from dataclean_env.canonical import MISSING, dtype_name, kind_of


def _normalise(values: list[Any]) -> list[Any]:
    # `v != v` is how NaN and NaT say they are missing; pd.NA must be caught before it.
    return [MISSING if v is None or v is pd.NA or v != v else v for v in values]


@dataclass(frozen=True)
class Snapshot:
    columns: tuple[str, ...]
    kinds: dict[str, str]
    dtype_names: dict[str, str]
    values: dict[str, list[Any]]  # missing cells are MISSING
    n_rows: int

    @classmethod
    def of(cls, table: pd.DataFrame) -> Snapshot:
        columns = tuple(table.columns)
        dtypes = table.dtypes.tolist()
        values = {c: _normalise(s.tolist()) for c, s in table.items()}
        return cls(
            columns=columns,
            kinds={c: kind_of(d) for c, d in zip(columns, dtypes, strict=True)},
            dtype_names={c: dtype_name(d) for c, d in zip(columns, dtypes, strict=True)},
            values=values,
            n_rows=len(table),
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

    def missing_counts(self) -> dict[str, int]:
        return {c: sum(1 for v in self.values[c] if v is MISSING) for c in self.columns}
