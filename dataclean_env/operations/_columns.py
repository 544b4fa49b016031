"""Helpers shared by operations: checking column arguments against the table."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from dataclean_env.errors import InvalidParameters


def require_columns(table: pd.DataFrame, columns: Iterable[str]) -> list[str]:
    """The columns, in order, or InvalidParameters naming the ones the table lacks."""
    wanted = list(columns)
    unknown = [c for c in wanted if c not in table.columns]
    if unknown:
        raise InvalidParameters(f"unknown column(s) {unknown}; the table has {list(table.columns)}")
    return wanted


def sample(values: Iterable[object], limit: int = 3) -> str:
    shown = list(values)[:limit]
    return ", ".join(repr(v) for v in shown)


def replace_columns(table: pd.DataFrame, columns: dict[str, pd.Series]) -> pd.DataFrame:
    """A new table with `columns` replaced; the input table is not modified."""
    result = table.copy(deep=False)
    for name, series in columns.items():
        result[name] = series
    return result


def take_rows(table: pd.DataFrame, keep: list[int]) -> pd.DataFrame:
    """A new table of the rows at positions `keep`, numbered from 0 again."""
    result = table.take(keep)
    result.index = pd.RangeIndex(len(keep))
    return result
