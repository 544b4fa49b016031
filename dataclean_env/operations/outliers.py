"""remove_outliers: drop rows whose value in a numeric column is far from the rest.

iqr: outside [Q1 - k*IQR, Q3 + k*IQR] with k = threshold (default 1.5), quartiles by linear
interpolation (pandas' and numpy's default). zscore: |x - mean| / std > threshold (default
3.0), population std. Missing cells are never outliers. Numbers stored as text must be
converted first.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from dataclean_env.errors import OperationFailed
from dataclean_env.operations.column_checks import (
    kept_rows,
    replace_columns,
    require_columns,
    require_modifiable,
)
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation
from dataclean_env.table.deferred import Table
from dataclean_env.table.values import NUMERIC_KINDS, SMALL_COLUMN, Kind, numbers_in

DEFAULT_THRESHOLD = {"iqr": 1.5, "zscore": 3.0}


class RemoveOutliersParams(Params):
    method: Literal["iqr", "zscore"] = Field(default="iqr", description="Outlier rule.")
    column: str | None = Field(
        default=None, description="One numeric column (default: all numeric columns)."
    )
    threshold: float | None = Field(
        default=None, gt=0, le=100, description="k for iqr (1.5), z for zscore (3.0)."
    )


def outlier_mask(values: np.ndarray, method: str, threshold: float) -> np.ndarray:
    """True where a value is an outlier; NaN (missing) never is."""
    present = values[~np.isnan(values)]
    if present.size == 0:
        return np.zeros(values.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        if method == "iqr":
            # Python quartiles on small columns (numpy's call costs more than their work);
            # numpy's own on large ones, and wherever a zero is (0.0 or -0.0: which zero
            # numpy's partition picks is numpy's to say).
            ordered = sorted(present.tolist()) if present.size <= SMALL_COLUMN else [0.0]
            if 0 in ordered:
                q1, q3 = np.percentile(present, [25, 75])
            else:
                q1, q3 = linear_percentile(ordered, 25), linear_percentile(ordered, 75)
            spread = q3 - q1
            outside: np.ndarray = (values < q1 - threshold * spread) | (
                values > q3 + threshold * spread
            )
            return outside
        std = present.std()
        if std == 0:
            return np.zeros(values.shape, dtype=bool)
        far: np.ndarray = np.abs(values - present.mean()) / std > threshold
        return far


def linear_percentile(ordered: list[float], q: float) -> float:
    """`np.percentile(values, q)` (linear interpolation) of values sorted ascending, in
    Python (numpy's call costs more than a small column's whole work). The same steps as
    numpy's, so the same float: the virtual index (n - 1) * q / 100, and numpy's `_lerp`,
    which interpolates from the upper value when the fraction is 0.5 or more."""
    last = len(ordered) - 1
    virtual = last * (q / 100)
    below = math.floor(virtual) if virtual < last else last
    above = min(below + 1, last)
    fraction = virtual - below
    low, high = ordered[below], ordered[above]
    step = high - low
    return high - step * (1 - fraction) if fraction >= 0.5 else low + step * fraction


@operation(
    "remove_outliers",
    RemoveOutliersParams,
    rank=4,
    lazy=True,
    description="Drop rows with an outlier in a numeric column (iqr or zscore).",
)
def remove_outliers(table: Table, params: RemoveOutliersParams, ctx: OpContext) -> OpResult:
    snapshot = ctx.snapshot_of(table)
    if params.column:
        columns = require_columns(snapshot, [params.column])
        if snapshot.kinds[params.column] not in NUMERIC_KINDS:
            raise OperationFailed(
                f"column {params.column!r} is not numeric ({snapshot.kinds[params.column]}); "
                "convert it with fix_dtype first"
            )
    else:
        columns = [c for c in snapshot.columns if snapshot.kinds[c] in NUMERIC_KINDS]
    threshold = params.threshold or DEFAULT_THRESHOLD[params.method]
    drop = np.zeros(snapshot.n_rows, dtype=bool)
    for column in columns:
        numbers, _ = numbers_in(snapshot.values[column], snapshot.kinds[column])
        drop |= outlier_mask(numbers, params.method, threshold)
    removed = int(drop.sum())
    where = params.column or "numeric columns"
    if not removed:
        return OpResult(table, f"No outliers found by {params.method} on {where}.")
    keep = np.flatnonzero(~drop).tolist()
    message = (
        f"Removed {removed} outlier rows by {params.method} on {where} "
        f"({snapshot.n_rows} -> {len(keep)})."
    )
    return kept_rows(table, snapshot, keep, message)


class ClampOutliersParams(Params):
    column: str = Field(description="A numeric column.")
    low: float = Field(description="Values below become this.")
    high: float = Field(description="Values above become this.")

    @model_validator(mode="after")
    def _ordered(self) -> ClampOutliersParams:
        if not (math.isfinite(self.low) and math.isfinite(self.high)) or self.low > self.high:
            raise ValueError("low and high must be finite numbers with low <= high")
        return self


@operation(
    "clamp_outliers",
    ClampOutliersParams,
    rank=4,
    repeatable=True,
    description="Clamp a numeric column into [low, high] instead of dropping rows.",
)
def clamp_outliers(table: pd.DataFrame, params: ClampOutliersParams, ctx: OpContext) -> OpResult:
    require_columns(table, [params.column])
    require_modifiable(ctx, [params.column])
    snapshot = ctx.snapshot_of(table)
    kind = snapshot.kinds[params.column]
    if kind not in NUMERIC_KINDS:
        raise OperationFailed(
            f"column {params.column!r} is not numeric ({kind}); convert it with fix_dtype first"
        )
    numbers, _ = numbers_in(snapshot.values[params.column], kind)
    with np.errstate(invalid="ignore"):
        outside = (numbers < params.low) | (numbers > params.high)
    if not outside.any():
        return OpResult(table, f"clamp_outliers: nothing outside [{params.low}, {params.high}].")
    clamped = np.clip(numbers, params.low, params.high)
    if kind == Kind.INT and float(params.low).is_integer() and float(params.high).is_integer():
        clamped = clamped.astype("int64")
    changed = {params.column: pd.Series(clamped, index=table.index, name=params.column)}
    return OpResult(
        replace_columns(table, changed),
        f"clamp_outliers: {int(outside.sum())} values of {params.column} clamped into "
        f"[{params.low}, {params.high}].",
        snapshot.with_columns(changed),
    )
