"""Helpers shared by operations: checking column arguments against the table."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from dataclean_env.errors import InvalidParameters, OperationFailed
from dataclean_env.operations.registry import OpContext, OpResult
from dataclean_env.table.deferred import Table, derive, frame_of
from dataclean_env.table.snapshot import Edit, Snapshot
from dataclean_env.table.values import MISSING, Kind


def require_columns(table: pd.DataFrame | Snapshot, columns: Iterable[str]) -> list[str]:
    """The columns, in order, or InvalidParameters naming the ones the table (or its
    snapshot) lacks."""
    wanted = list(columns)
    unknown = [c for c in wanted if c not in table.columns]
    if unknown:
        raise InvalidParameters(f"unknown column(s) {unknown}; the table has {list(table.columns)}")
    return wanted


def require_modifiable(ctx: OpContext, columns: Iterable[str]) -> None:
    protected = [c for c in columns if c in ctx.protected_columns]
    if protected:
        raise InvalidParameters(f"column(s) {protected} are protected key columns of this task")


def text_columns(table: pd.DataFrame, ctx: OpContext, column: str | None) -> list[str]:
    """The named column (which must hold text), or every text column that is not protected."""
    snapshot = ctx.snapshot_of(table)
    if column is not None:
        require_columns(table, [column])
        require_modifiable(ctx, [column])
        if snapshot.kinds[column] != Kind.STR:
            raise OperationFailed(
                f"column {column!r} holds {snapshot.kinds[column]} values, not text"
            )
        return [column]
    return [
        c
        for c in snapshot.columns
        if snapshot.kinds[c] == Kind.STR and c not in ctx.protected_columns
    ]


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


def kept_rows(table: Table, snapshot: Snapshot, keep: list[int], message: str) -> OpResult:
    """The result of keeping the rows at positions `keep` (of `snapshot`, the table's),
    the DataFrame deferred."""
    return OpResult(
        derive(table, lambda frame: take_rows(frame, keep)), message, snapshot.with_rows(keep)
    )


def _changes(old: list[Any], new: list[Any]) -> int:
    """How many cells of `new` (snapshot form) differ from `old`."""
    # `!=` in one C map: an unchanged cell is the very same object (or an equal one), and
    # snapshots hold no NaN (missing is MISSING), so identity never disagrees with `==`.
    if len(old) != len(new):
        raise ValueError("a rewritten column must keep its length")
    return sum(map(operator.ne, old, new))


def _column_series(table: pd.DataFrame, column: str, new: list[Any]) -> pd.Series:
    """The column rebuilt from `new` (snapshot form), of the column's dtype."""
    values = [np.nan if v is MISSING else v for v in new] if MISSING in new else new
    return pd.Series(values, index=table.index, dtype=table[column].dtype)


def _rewritten(
    table: pd.DataFrame, column: str, old: list[Any], new: list[Any]
) -> tuple[pd.Series | None, int]:
    """The column rebuilt from `new` (snapshot form), and how many cells differ from `old`."""
    count = _changes(old, new)
    return (_column_series(table, column, new) if count else None), count


def rewrite_columns(
    table: pd.DataFrame, ctx: OpContext, new_values: dict[str, list[Any]], what: str
) -> OpResult:
    snapshot = ctx.snapshot_of(table)
    changed: dict[str, pd.Series] = {}
    counts = []
    for column, new in new_values.items():
        series, count = _rewritten(table, column, snapshot.values[column], new)
        if series is not None:
            changed[column] = series
            counts.append(f"{column} ({count})")
    if not changed:
        return OpResult(table, f"{what}: no cell changed.")
    result = replace_columns(table, changed)
    return OpResult(result, f"{what}: {', '.join(counts)}.", snapshot.with_columns(changed))


def _text_dtype(dtype: Any) -> bool:
    return isinstance(dtype, pd.StringDtype) or (isinstance(dtype, np.dtype) and dtype.kind == "O")


def rewrite_columns_lazily(
    table: Table,
    ctx: OpContext,
    new_values: dict[str, list[Any]],
    what: str,
    touched: dict[str, list[int]],
) -> OpResult:
    """`rewrite_columns` with the DataFrame deferred when every column rewritten is of
    text (object or string dtype): the new snapshot is then `new_values` themselves, which
    is what reading the rebuilt columns back would give, with the positions each column's
    new cells may differ at (`touched`) as its `Edit`. Other columns are rebuilt now."""
    snapshot = ctx.snapshot_of(table)
    if not all(_text_dtype(snapshot.dtypes[c]) for c in new_values):
        return rewrite_columns(frame_of(table), ctx, new_values, what)
    counts = {c: _changes(snapshot.values[c], new) for c, new in new_values.items()}
    changed = {c: new for c, new in new_values.items() if counts[c]}
    if not changed:
        return OpResult(table, f"{what}: no cell changed.")

    def build(frame: pd.DataFrame) -> pd.DataFrame:
        return replace_columns(frame, {c: _column_series(frame, c, v) for c, v in changed.items()})

    message = f"{what}: {', '.join(f'{c} ({counts[c]})' for c in changed)}."
    cells = {c: (new, snapshot.dtypes[c]) for c, new in changed.items()}
    edits = {
        c: Edit(snapshot.values[c], new, tuple(sorted(set(touched[c]))))
        for c, new in changed.items()
    }
    return OpResult(derive(table, build), message, snapshot.with_values(cells, edits))


def rewrite_rows(
    table: pd.DataFrame, ctx: OpContext, column: str, new: list[Any], what: str
) -> OpResult:
    """Replace a column's values (snapshot form, MISSING for empty) by `new`, row by row."""
    return rewrite_columns(table, ctx, {column: new}, what)


def rewrite_cells(
    table: pd.DataFrame,
    ctx: OpContext,
    columns: list[str],
    rewrite: Callable[[Any], Any],
    what: str,
    text_method: Callable[[str], Any] | None = None,
) -> OpResult:
    """Apply `rewrite` to every present cell of `columns`; report how many cells changed.

    `rewrite` returns the new value (MISSING to empty the cell). Columns keep their type.
    `text_method`, when given, is what `rewrite` does to a text cell (`str.strip`, say):
    a column of text and gaps is then rewritten in one C-level map."""
    values = ctx.snapshot_of(table).values
    new_values = {c: _rewritten_cells(values[c], rewrite, text_method) for c in columns}
    return rewrite_columns(table, ctx, new_values, what)


def _rewritten_cells(
    cells: list[Any], rewrite: Callable[[Any], Any], text_method: Callable[[str], Any] | None
) -> list[Any]:
    if text_method is None or not set(map(type, cells)) <= {str, type(MISSING)}:
        return [v if v is MISSING else rewrite(v) for v in cells]
    gaps = [i for i, v in enumerate(cells) if v is MISSING] if MISSING in cells else []
    if not gaps:
        return list(map(text_method, cells))
    texts = list(cells)
    for i in gaps:
        texts[i] = ""
    rewritten = list(map(text_method, texts))
    for i in gaps:
        rewritten[i] = MISSING
    return rewritten
