"""The error classes of the literature that tab-err 0.2.1 lacks, built on tab-err's own
classes so that its error mechanisms (ECAR, EAR, ENAR) still choose the rows.

tab-err has typos, explicit and implicit missing values, outliers, shifted values, wrong
units, swapped categories, reordered or re-separated value parts, stray text and mojibake;
it has no change of letter case, no exchange of values between two columns, and nothing
that adds rows (an entity's duplicate, or several sources reporting one entity with
conflicting values). So:

* CaseVariant  (a tab-err ErrorType): the value in upper, lower or title case;
* ColumnSwap   (a tab-err ErrorType): the row's value of another column of the same kind,
               which that column gets in exchange (build_corpus.py writes both cells);
* duplicates and conflicting sources add rows, which no ErrorType can (an ErrorType maps a
  column to a column): `reports` makes them, on rows a tab-err mechanism chose.

Every choice is drawn from the layer's seeded generator, so a build is byte-identical.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api.types import is_numeric_dtype, is_string_dtype
from tab_err._utils import get_column
from tab_err.error_type import ErrorType

CASES = (str.upper, str.lower, str.title)
CONFLICT_REPORTS = 2  # further reports of an entity a conflict layer adds (3 in all)
CONFLICT_COLUMNS = 2  # facts the reports of one entity disagree on (one report wrong each)


class CaseVariant(ErrorType):
    """The value in another letter case: upper, lower or title, whichever differs."""

    @staticmethod
    def _check_type(data: pd.DataFrame, column: int | str) -> None:
        if not is_string_dtype(get_column(data, column)):
            raise TypeError(f"Column {column} does not hold text; cannot change its case.")

    def _get_valid_columns(self: CaseVariant, data: pd.DataFrame) -> list[str | int]:
        return data.select_dtypes(include=["string", "object"]).columns.to_list()

    def _varied(self: CaseVariant, value: str) -> str:
        variants = [case(value) for case in CASES if case(value) != value]
        return variants[self._random_generator.integers(len(variants))] if variants else value

    def _apply(
        self: CaseVariant, data: pd.DataFrame, error_mask: pd.DataFrame, column: int | str
    ) -> pd.Series:
        series = get_column(data, column).copy()
        mask = get_column(error_mask, column)
        series.loc[mask] = series.loc[mask].apply(self._varied)
        return series


class ColumnSwap(ErrorType):
    """The row's value of `partner` (a number column too): the two values exchanged."""

    def __init__(self: ColumnSwap, partner: str, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.partner = partner

    @staticmethod
    def _check_type(data: pd.DataFrame, column: int | str) -> None:
        if not is_numeric_dtype(get_column(data, column)):
            raise TypeError(f"Column {column} does not hold numbers; swap with another.")

    def _get_valid_columns(self: ColumnSwap, data: pd.DataFrame) -> list[str | int]:
        numbers = data.select_dtypes(include="number").columns.to_list()
        return numbers if self.partner in numbers else []

    def _apply(
        self: ColumnSwap, data: pd.DataFrame, error_mask: pd.DataFrame, column: int | str
    ) -> pd.Series:
        series = get_column(data, column).copy()
        mask = get_column(error_mask, column)
        series.loc[mask] = data.loc[mask, self.partner]
        return series


def reports(
    clean: pd.DataFrame, rows: list[int], conflicting: bool, seed: int
) -> tuple[dict[tuple[int, int], list[str]], dict[tuple[int, str], str]]:
    """Further rows describing the entities of `rows` (positions in `clean`, text cells).

    A duplicate (`conflicting` False) is one exact copy of its row. Conflicting sources are
    CONFLICT_REPORTS further reports of the entity; on CONFLICT_COLUMNS of its facts one of
    the entity's reports (the original row included) holds another row's value of that
    column, so each fact keeps a majority of right reports. Returns the added rows,
    (row, copy) -> cells, copies numbered from 1, and the original rows' changed cells.
    """
    generator = np.random.default_rng(seed)
    columns = list(clean.columns)
    added: dict[tuple[int, int], list[str]] = {}
    changed: dict[tuple[int, str], str] = {}
    copies = CONFLICT_REPORTS if conflicting else 1
    for row in rows:
        for copy in range(1, copies + 1):
            added[(row, copy)] = list(clean.iloc[row])
        if not conflicting:
            continue
        for position in generator.choice(len(columns), CONFLICT_COLUMNS, replace=False):
            column = columns[int(position)]
            right = clean.iat[row, int(position)].strip()
            others = [v for v in clean[column] if v.strip() != right]
            if not others:
                continue  # a column of one value cannot conflict
            wrong = others[int(generator.integers(len(others)))]
            report = int(generator.integers(copies + 1))
            if report == 0:
                changed[(row, column)] = wrong
            else:
                added[(row, report)][int(position)] = wrong
    return added, changed
