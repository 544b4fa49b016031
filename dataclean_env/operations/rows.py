"""Row-level operations: drop_rows, set_cell, set_cells, and show_rows to look further down.

A row id is the value of the task's protected key column (the column its description names;
`row_id` for a custom dataset without a key). Ids stay with their rows whatever else the
agent does, and they are what the sample rows already show. Every row carrying an id is
addressed, so the near-duplicate copies of a record are dropped or corrected together.

`set_cells` is `set_cell` for a batch: up to MAX_CELL_ASSIGNMENTS cells in one step, all or
nothing, each value at most MAX_VALUE_CHARS characters. The grader still scores cell by
cell, so a batch earns exactly what its cells set one at a time would.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
import pandas as pd
from pydantic import Field

from dataclean_env.errors import InvalidParameters, OperationFailed
from dataclean_env.grading.gold_facts import key_text
from dataclean_env.operations.column_checks import (
    require_columns,
    require_modifiable,
    rewrite_columns_lazily,
    rewrite_rows,
    sample,
    take_rows,
)
from dataclean_env.operations.fill import constant_for, number_for
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation
from dataclean_env.table.deferred import Table
from dataclean_env.table.int_keys import int_keys, integer_of
from dataclean_env.table.values import MISSING, NUMERIC_KINDS, Kind

RowId = int | str
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_ROW_IDS = 1000
MAX_SHOWN_ROWS = 50
MAX_CELL_ASSIGNMENTS = 1000  # cells one set_cells step may set
MAX_VALUE_CHARS = 1000  # characters of one value set_cells may write (the default cell limit)


def _key_column(ctx: OpContext) -> str:
    if len(ctx.protected_columns) != 1:
        raise OperationFailed("this task has no key column, so its rows have no ids")
    return next(iter(ctx.protected_columns))


def _rows_by_id(table: Table, ctx: OpContext, row_ids: list[RowId]) -> list[list[int]]:
    """The row positions of each id (all or nothing: an unknown id refuses the step)."""
    key = _key_column(ctx)
    positions = _positions(ctx.snapshot_of(table).values[key], {key_text(r) for r in row_ids})
    unknown = [r for r in row_ids if key_text(r) not in positions]
    if unknown:
        raise InvalidParameters(f"no row has {key} = {sample(unknown)}")
    return [positions[key_text(r)] for r in row_ids]


def _positions(keys: list[Any], wanted: set[str | None]) -> dict[str | None, list[int]]:
    """The positions of the rows whose key text is in `wanted`, by key text, in order.
    Integer keys are matched in numpy, without reading every row's key text."""
    positions: dict[str | None, list[int]] = {}
    numbers = int_keys(keys)
    if numbers is None:
        for i, value in enumerate(keys):
            text = key_text(value)
            if text in wanted:
                positions.setdefault(text, []).append(i)
        return positions
    targets = [n for n in map(integer_of, wanted) if n is not None]
    for i in np.flatnonzero(np.isin(numbers, targets)).tolist():
        positions.setdefault(str(keys[i]), []).append(i)
    return positions


class DropRowsParams(Params):
    row_ids: list[RowId] = Field(
        min_length=1, max_length=MAX_ROW_IDS, description="Key values of the rows to drop."
    )


@operation(
    "drop_rows",
    DropRowsParams,
    rank=4,
    repeatable=True,
    description="Drop every row whose key column holds one of `row_ids`.",
)
def drop_rows(table: pd.DataFrame, params: DropRowsParams, ctx: OpContext) -> OpResult:
    dropped = {i for rows in _rows_by_id(table, ctx, params.row_ids) for i in rows}
    keep = [i for i in range(len(table)) if i not in dropped]
    result = take_rows(table, keep)
    message = f"Dropped {len(dropped)} rows ({len(table)} -> {len(result)})."
    return OpResult(result, message, ctx.snapshot_of(table).with_rows(keep))


class SetCellParams(Params):
    row_id: RowId = Field(description="Key value of the row (all rows with this key).")
    column: str
    value: str | int | float | bool | None = Field(
        description="The new value, of the column's type (dates as ISO text); null empties it."
    )


@operation(
    "set_cell",
    SetCellParams,
    rank=2,
    repeatable=True,
    description="Set `column` to `value` in the row(s) whose key is `row_id`.",
)
def set_cell(table: pd.DataFrame, params: SetCellParams, ctx: OpContext) -> OpResult:
    require_columns(table, [params.column])
    require_modifiable(ctx, [params.column])
    (rows,) = _rows_by_id(table, ctx, [params.row_id])
    snapshot = ctx.snapshot_of(table)
    new_value = _cell_value(params.column, snapshot.kinds[params.column], params.value)
    new = list(snapshot.values[params.column])
    for i in rows:
        new[i] = new_value
    return rewrite_rows(table, ctx, params.column, new, "set_cell")


def _cell_value(column: str, kind: Kind, value: str | int | float | bool | None) -> Any:
    """`value` as a cell of a `kind` column (MISSING for null), or InvalidParameters."""
    if value is None:
        if kind in (Kind.INT, Kind.BOOL):
            raise InvalidParameters(f"column {column!r} ({kind}) cannot hold empty cells")
        return MISSING
    if kind not in NUMERIC_KINDS:
        return constant_for(column, kind, value)
    cell = number_for(column, value)
    if kind == Kind.INT and not (float(cell).is_integer() and INT64_MIN <= cell <= INT64_MAX):
        raise InvalidParameters(f"column {column!r} holds whole numbers; {value!r} is not one")
    if kind == Kind.FLOAT and not math.isfinite(cell):
        raise InvalidParameters(f"column {column!r} needs a finite number, not {value!r}")
    return int(cell) if kind == Kind.INT else cell


class CellAssignment(Params):
    row_id: RowId = Field(description="Key value of the row (all rows with this key).")
    column: str
    value: Annotated[str, Field(max_length=MAX_VALUE_CHARS)] | int | float | bool | None = Field(
        description="The new value, of the column's type (dates as ISO text); null empties it."
    )


class SetCellsParams(Params):
    cells: list[CellAssignment] = Field(
        min_length=1,
        max_length=MAX_CELL_ASSIGNMENTS,
        description='Assignments like {"row_id": 7, "column": "city", "value": "Boston"}.',
    )


@operation(
    "set_cells",
    SetCellsParams,
    rank=2,
    repeatable=True,
    lazy=True,
    description=(
        f"Set up to {MAX_CELL_ASSIGNMENTS} cells at once, each as `set_cell` would; all or nothing."
    ),
)
def set_cells(table: Table, params: SetCellsParams, ctx: OpContext) -> OpResult:
    snapshot = ctx.snapshot_of(table)
    assignments = params.cells
    require_columns(snapshot, dict.fromkeys(a.column for a in assignments))
    require_modifiable(ctx, {a.column for a in assignments})
    seen: set[tuple[str | None, str]] = set()
    for assignment in assignments:
        cell = (key_text(assignment.row_id), assignment.column)
        if cell in seen:
            raise InvalidParameters(
                f"row_id {assignment.row_id!r}, column {assignment.column!r} is set twice"
            )
        seen.add(cell)
    rows = _rows_by_id(table, ctx, [a.row_id for a in assignments])
    new: dict[str, list[Any]] = {}
    touched: dict[str, list[int]] = {}
    for assignment, positions in zip(assignments, rows, strict=True):
        column = assignment.column
        value = _cell_value(column, snapshot.kinds[column], assignment.value)
        cells = new.get(column)
        if cells is None:
            cells = new[column] = list(snapshot.values[column])
        for i in positions:
            cells[i] = value
        touched.setdefault(column, []).extend(positions)
    return rewrite_columns_lazily(table, ctx, new, "set_cells", touched)


class ShowRowsParams(Params):
    offset: int = Field(default=0, ge=0, description="Position of the first row to show.")
    limit: int = Field(default=20, ge=1, le=MAX_SHOWN_ROWS, description="How many rows to show.")


@operation(
    "show_rows",
    ShowRowsParams,
    rank=5,
    repeatable=True,
    description="Leave the table as it is; later observations' sample_rows show this window.",
)
def show_rows(table: pd.DataFrame, params: ShowRowsParams, ctx: OpContext) -> OpResult:
    first = min(params.offset, len(table))
    last = min(first + params.limit, len(table))
    message = f"Showing rows {first}..{last - 1} of {len(table)}." if last > first else "No rows."
    return OpResult(table, message, window=(first, params.limit))
