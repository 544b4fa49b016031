"""remove_outliers: drop rows whose value in a numeric column is far from the rest.

iqr: outside [Q1 - k*IQR, Q3 + k*IQR] with k = threshold (default 1.5).
zscore: |x - mean| / std > threshold (default 3.0), population std.
Missing cells are never outliers. Numbers stored as text must be converted first.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import Field

from dataclean_env.canonical import kind_of
from dataclean_env.errors import OperationFailed
from dataclean_env.operations._columns import require_columns
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation

DEFAULT_THRESHOLD = {"iqr": 1.5, "zscore": 3.0}


class RemoveOutliersParams(Params):
    method: Literal["iqr", "zscore"] = Field(default="iqr", description="Outlier rule.")
    column: str | None = Field(
        default=None, description="One numeric column (default: all numeric columns)."
    )
    threshold: float | None = Field(
        default=None, gt=0, le=100, description="k for iqr (1.5), z for zscore (3.0)."
    )


def outlier_mask(values: pd.Series, method: str, threshold: float) -> pd.Series:
    present = values.dropna()
    if present.empty:
        return pd.Series(False, index=values.index)
    if method == "iqr":
        q1, q3 = present.quantile(0.25), present.quantile(0.75)
        spread = q3 - q1
        return (values < q1 - threshold * spread) | (values > q3 + threshold * spread)
    std = present.std(ddof=0)
    if std == 0:
        return pd.Series(False, index=values.index)
    return ((values - present.mean()).abs() / std) > threshold


@operation(
    "remove_outliers",
    RemoveOutliersParams,
    rank=4,
    description="Drop rows with an outlier in a numeric column (iqr or zscore).",
)
def remove_outliers(table: pd.DataFrame, params: RemoveOutliersParams, ctx: OpContext) -> OpResult:
    if params.column:
        columns = require_columns(table, [params.column])
        if kind_of(table[params.column].dtype) not in ("int", "float"):
            raise OperationFailed(
                f"column {params.column!r} is not numeric ({kind_of(table[params.column].dtype)}); "
                "convert it with fix_dtype first"
            )
    else:
        columns = [c for c in table.columns if kind_of(table[c].dtype) in ("int", "float")]
    threshold = params.threshold or DEFAULT_THRESHOLD[params.method]
    drop = pd.Series(False, index=table.index)
    for column in columns:
        drop |= outlier_mask(table[column].astype("float64"), params.method, threshold)
    result = table[~drop].reset_index(drop=True)
    where = params.column or "numeric columns"
    return OpResult(
        result,
        f"Removed {int(drop.sum())} outlier rows by {params.method} on {where} "
        f"({len(table)} -> {len(result)}).",
    )
