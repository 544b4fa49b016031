"""fill_missing: fill empty cells by mean, median, mode, forward/backward fill or a constant.

Fills never change a column's type: a number stored as text is filled with text, so that
fixing types stays a separate step. Means and medians are rounded half-to-even to whole
numbers when every present value is whole, else to two decimals.
"""

from __future__ import annotations

import math
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from dataclean_env.errors import InvalidParameters, OperationFailed
from dataclean_env.operations.column_checks import (
    replace_columns,
    require_columns,
    require_modifiable,
    sample,
)
from dataclean_env.operations.registry import OpContext, OpResult, Params, alias, operation
from dataclean_env.table.deferred import Table, derive, frame_of
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import (
    EXACT_INT,
    MISSING,
    NUMERIC_KINDS,
    SMALL_COLUMN,
    Kind,
    numbers_in,
    parse_date,
    present_numbers,
)

Strategy = Literal["mean", "median", "mode", "ffill", "bfill", "constant"]
STRATEGIES: tuple[str, ...] = get_args(Strategy)


class FillMissingParams(Params):
    strategy: Strategy = Field(default="mean", description="How to choose the fill value.")
    column: str | None = Field(
        default=None, description="One column (default: every column with missing values)."
    )
    value: str | int | float | bool | None = Field(
        default=None,
        description="The fill value; required with strategy=constant, refused otherwise.",
    )

    @model_validator(mode="after")
    def _value_goes_with_constant(self) -> FillMissingParams:
        if self.strategy == "constant":
            if self.value is None:
                raise ValueError("strategy 'constant' needs a 'value'")
            if isinstance(self.value, float) and not math.isfinite(self.value):
                raise ValueError("'value' must be a finite number")
        elif self.value is not None:
            raise ValueError(f"'value' only goes with strategy 'constant', not {self.strategy!r}")
        return self


@operation(
    "fill_missing",
    FillMissingParams,
    rank=2,
    repeatable=True,
    lazy=True,
    description=(
        "Fill missing cells. mean/median apply to numeric columns (numbers stored as text "
        "count), mode and ffill/bfill to any column, constant needs a value of the column's type."
    ),
)
def fill_missing(table: Table, params: FillMissingParams, ctx: OpContext) -> OpResult:
    snapshot = ctx.snapshot_of(table)
    missing = snapshot.missing_counts()
    if params.column is not None:
        require_columns(snapshot, [params.column])
        require_modifiable(ctx, [params.column])
        if not missing[params.column]:
            return OpResult(
                table, f"Column {params.column!r} has no missing values; nothing filled."
            )
        targets = [params.column]
    else:
        targets = [c for c in snapshot.columns if missing[c] and c not in ctx.protected_columns]

    fills: dict[str, Any] = {}  # column -> fill value (None for ffill/bfill)
    skipped = []
    for column in targets:
        try:
            fills[column] = _fill_value(column, snapshot, params)
        except OperationFailed:
            if params.column is not None:
                raise
            skipped.append(column)
    if not fills:
        message = f"No missing values filled with {params.strategy}."
        return OpResult(table, message + _skipped(skipped))
    if params.strategy not in ("ffill", "bfill") and all(
        _plain(snapshot.dtypes[c], v) for c, v in fills.items()
    ):
        return _filled_plain(table, snapshot, params.strategy, fills, missing, skipped)

    frame = frame_of(table)
    changed: dict[str, pd.Series] = {}
    filled = []
    for column, value in fills.items():
        new = _filled(frame[column], params.strategy, value)
        # Only forward/backward fill can leave cells empty (at the start or the end).
        left = int(new.isna().sum()) if params.strategy in ("ffill", "bfill") else 0
        count = missing[column] - left
        if count:
            changed[column] = new
            filled.append(f"{column} ({count})")
    if not changed:
        message = f"No missing values filled with {params.strategy}."
        return OpResult(table, message + _skipped(skipped))
    message = f"Filled with {params.strategy}: {', '.join(filled)}." + _skipped(skipped)
    return OpResult(replace_columns(frame, changed), message, snapshot.with_columns(changed))


def _skipped(columns: list[str]) -> str:
    return f" Skipped (strategy does not apply): {', '.join(columns)}." if columns else ""


def _fill_value(column: str, snapshot: Snapshot, params: FillMissingParams) -> Any:
    """The value that fills `column` (None for ffill/bfill), or OperationFailed."""
    strategy = params.strategy
    if strategy in ("ffill", "bfill"):
        return None
    kind = snapshot.kinds[column]
    if strategy == "constant":
        assert params.value is not None  # FillMissingParams requires it with constant
        return constant_for(column, kind, params.value)
    values = snapshot.values[column]
    if strategy == "mode":
        return _mode(column, values)
    return _average(column, values, kind, strategy)


def _filled(series: pd.Series, strategy: str, value: Any) -> pd.Series:
    if strategy == "ffill":
        return series.ffill()
    if strategy == "bfill":
        return series.bfill()
    return series.fillna(value)


def _plain(dtype: object, value: object) -> bool:
    """Whether pandas' fillna would store `value` in a column of `dtype` as the plain value
    itself: a number in a numpy float column (stored as its float), text in a string column.
    Only then is the filled column's snapshot written without pandas."""
    if type(value) is float or (type(value) is int and abs(value) <= EXACT_INT):
        return isinstance(dtype, np.dtype) and dtype == np.float64
    return type(value) is str and isinstance(dtype, pd.StringDtype)


def _filled_plain(
    table: Table,
    snapshot: Snapshot,
    strategy: str,
    fills: dict[str, Any],
    missing: dict[str, int],
    skipped: list[str],
) -> OpResult:
    """The fill of `_plain` values: the new cells in Python, the DataFrame deferred."""
    cells = {}
    for column, value in fills.items():
        dtype = snapshot.dtypes[column]
        stored = float(value) if isinstance(dtype, np.dtype) else value
        cells[column] = ([stored if v is MISSING else v for v in snapshot.values[column]], dtype)
    filled = ", ".join(f"{column} ({missing[column]})" for column in fills)
    message = f"Filled with {strategy}: {filled}." + _skipped(skipped)

    def build(frame: pd.DataFrame) -> pd.DataFrame:
        return replace_columns(frame, {c: frame[c].fillna(v) for c, v in fills.items()})

    return OpResult(derive(table, build), message, snapshot.with_values(cells))


def _mode(name: str, values: list[Any]) -> Any:
    counts: dict[object, int] = {}
    for value in values:
        if value is not MISSING:
            counts[value] = counts.get(value, 0) + 1
    if not counts:
        raise OperationFailed(f"column {name!r} has no values to take a mode from")
    top = max(counts.values())
    # Ties resolve to the smallest value, whatever the row order.
    return min((v for v, n in counts.items() if n == top), key=lambda v: (type(v).__name__, v))


def _average(name: str, values: list[Any], kind: Kind, strategy: str) -> float | str:
    small = len(values) <= SMALL_COLUMN
    if small:  # plain Python: numpy's fixed cost per call outweighs a small column's work
        present, bad = present_numbers(values, kind, max_bad=3)
    else:  # whole-column numpy (and numbers_in's fast path for text numbers)
        numbers, bad = numbers_in(values, kind, max_bad=3)
        present = numbers[~np.isnan(numbers)].tolist()
    if bad:
        raise OperationFailed(
            f"{strategy} needs a numeric column; {name!r} holds {sample(dict.fromkeys(bad))}"
        )
    if not present:
        raise OperationFailed(f"column {name!r} has no values to average")
    # fsum is exact, so the mean does not depend on the order of the rows.
    mean = strategy == "mean"
    if mean:
        value = math.fsum(present) / len(present)
    else:
        value = _median(present) if small else float(np.median(np.array(present)))
    whole = all(number % 1 == 0 for number in present)  # what np.mod(present, 1) == 0 says
    value = round(value) if whole else round(value, 2)
    if kind in NUMERIC_KINDS:
        return value
    # A number stored as text is filled with text; fix_dtype turns the column into numbers.
    return str(int(value)) if whole else f"{value:.2f}"


def _median(numbers: list[float]) -> float:
    """`float(np.median(numbers))` in Python (faster on a column of a small table): the
    middle value, or the sum of the two middle values halved, as numpy computes them."""
    ordered = sorted(numbers)
    middle = len(ordered) // 2
    odd = len(ordered) % 2
    value = ordered[middle] if odd else (ordered[middle - 1] + ordered[middle]) / 2
    if value == 0:  # 0.0 or -0.0: which zero numpy's partition picks is numpy's to say
        return float(np.median(np.array(numbers)))
    return value


def constant_for(
    name: str, kind: Kind, value: str | int | float | bool
) -> str | float | bool | pd.Timestamp:
    if kind in NUMERIC_KINDS:
        return number_for(name, value)
    if kind == Kind.BOOL:
        if not isinstance(value, bool):
            raise InvalidParameters(f"column {name!r} is boolean; the constant must be true/false")
        return value
    if kind == Kind.DATETIME:
        stamp = parse_date(value) if isinstance(value, str) else None
        if stamp is None:
            raise InvalidParameters(
                f"column {name!r} holds dates; the constant must be an ISO date like 2024-01-31"
            )
        return stamp
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def number_for(name: str, value: str | int | float | bool) -> int | float:
    """`value` as a cell of the numeric column `name`, or InvalidParameters."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidParameters(
            f"column {name!r} is numeric; the constant must be a number, not {value!r}"
        )
    return value


for _strategy in STRATEGIES:
    alias(f"fill_missing_{_strategy}", "fill_missing", strategy=_strategy)
