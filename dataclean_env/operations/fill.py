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
from dataclean_env.snapshot import Snapshot
from dataclean_env.values import MISSING, NUMERIC_KINDS, Kind, numbers_in, parse_date

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
    description=(
        "Fill missing cells. mean/median apply to numeric columns (numbers stored as text "
        "count), mode and ffill/bfill to any column, constant needs a value of the column's type."
    ),
)
def fill_missing(table: pd.DataFrame, params: FillMissingParams, ctx: OpContext) -> OpResult:
    snapshot = ctx.snapshot_of(table)
    missing = snapshot.missing_counts()
    if params.column is not None:
        require_columns(table, [params.column])
        require_modifiable(ctx, [params.column])
        if not missing[params.column]:
            return OpResult(
                table, f"Column {params.column!r} has no missing values; nothing filled."
            )
        targets = [params.column]
    else:
        targets = [c for c in snapshot.columns if missing[c] and c not in ctx.protected_columns]

    changed: dict[str, pd.Series] = {}
    filled, skipped = [], []
    for column in targets:
        try:
            new = _fill(table[column], column, snapshot, params)
        except OperationFailed:
            if params.column is not None:
                raise
            skipped.append(column)
            continue
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
    return OpResult(replace_columns(table, changed), message, snapshot.with_columns(changed))


def _skipped(columns: list[str]) -> str:
    return f" Skipped (strategy does not apply): {', '.join(columns)}." if columns else ""


def _fill(series: pd.Series, name: str, snapshot: Snapshot, params: FillMissingParams) -> pd.Series:
    strategy = params.strategy
    if strategy == "ffill":
        return series.ffill()
    if strategy == "bfill":
        return series.bfill()
    kind = snapshot.kinds[name]
    if strategy == "constant":
        assert params.value is not None  # FillMissingParams requires it with constant
        return series.fillna(constant_for(name, kind, params.value))
    values = snapshot.values[name]
    if strategy == "mode":
        return series.fillna(_mode(name, values))
    return series.fillna(_average(name, values, kind, strategy))


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
    numbers, bad = numbers_in(values, kind, max_bad=3)
    if bad:
        raise OperationFailed(
            f"{strategy} needs a numeric column; {name!r} holds {sample(dict.fromkeys(bad))}"
        )
    present = numbers[~np.isnan(numbers)]
    if present.size == 0:
        raise OperationFailed(f"column {name!r} has no values to average")
    # fsum is exact, so the mean does not depend on the order of the rows.
    mean = strategy == "mean"
    value = math.fsum(present) / present.size if mean else float(np.median(present))
    whole = bool(np.all(np.mod(present, 1) == 0))
    value = round(value) if whole else round(value, 2)
    if kind in NUMERIC_KINDS:
        return value
    # A number stored as text is filled with text; fix_dtype turns the column into numbers.
    return str(int(value)) if whole else f"{value:.2f}"


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
