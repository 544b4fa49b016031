"""fix_dtype: convert columns to int, float, str, bool or datetime, or infer the type (auto).

A conversion never loses information: a value that cannot be read as the target type, a
fractional number cast to int, or a missing value in an int/bool column refuses the whole
step with a message naming the offending values, and the table is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field

from dataclean_env.canonical import is_iso_date, kind_of, numbers_of, parse_bool, parse_date
from dataclean_env.errors import OperationFailed
from dataclean_env.operations._columns import require_columns, sample
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation

Dtype = Literal["auto", "int", "float", "str", "bool", "datetime"]


class FixDtypeParams(Params):
    dtype: Dtype = Field(default="auto", description="Target type; auto infers it per column.")
    column: str | None = Field(default=None, description="One column (default: every column).")


def to_float(series: pd.Series) -> pd.Series:
    numbers, not_numbers = numbers_of(series)
    if not_numbers.any():
        raise OperationFailed(
            f"column {series.name!r} has values that are not numbers: "
            f"{sample(series[not_numbers].unique())}"
        )
    return numbers


def to_int(series: pd.Series) -> pd.Series:
    numbers = to_float(series)
    if numbers.isna().any():
        raise OperationFailed(
            f"column {series.name!r} has {int(numbers.isna().sum())} missing values; "
            "fill them first or use dtype 'float'"
        )
    fractional = np.mod(numbers.to_numpy(), 1) != 0
    if fractional.any():
        raise OperationFailed(
            f"column {series.name!r} has fractional values ({sample(numbers[fractional])}); "
            "casting to int would lose them"
        )
    return numbers.astype("int64")


def to_str(series: pd.Series) -> pd.Series:
    if kind_of(series.dtype) == "str":
        return series
    kind = kind_of(series.dtype)

    def text(value: object) -> object:
        if pd.isna(value):
            return np.nan
        if kind == "datetime":
            return str(value.date()) if value == value.normalize() else value.isoformat()
        if kind == "bool":
            return str(bool(value)).lower()
        return str(value)

    return pd.Series([text(v) for v in series], index=series.index, dtype=object)


def to_bool(series: pd.Series) -> pd.Series:
    if kind_of(series.dtype) == "bool":
        return series
    if series.isna().any():
        raise OperationFailed(
            f"column {series.name!r} has missing values; fill them before casting to bool"
        )
    parsed = [parse_bool(v) for v in series]
    bad = [v for v, p in zip(series, parsed, strict=True) if p is None]
    if bad:
        raise OperationFailed(
            f"column {series.name!r} has values that are not booleans: {sample(bad)}"
        )
    return pd.Series(parsed, index=series.index, dtype=bool)


def to_datetime(series: pd.Series) -> pd.Series:
    if kind_of(series.dtype) == "datetime":
        return series
    present = series.notna()
    parsed = [parse_date(v) if ok else None for v, ok in zip(series, present, strict=True)]
    bad = [v for v, p, ok in zip(series, parsed, present, strict=True) if ok and p is None]
    if bad:
        raise OperationFailed(
            f"column {series.name!r} has values that are not ISO dates (YYYY-MM-DD): {sample(bad)}"
        )
    return pd.Series(
        pd.to_datetime([p if p is not None else pd.NaT for p in parsed]), index=series.index
    )


def infer(series: pd.Series) -> pd.Series:
    """The most specific type every present value fits: int, float, bool, datetime or as is."""
    kind = kind_of(series.dtype)
    if kind in ("int", "bool", "datetime"):
        return series
    present = series.dropna()
    if present.empty:
        return series
    numbers, not_numbers = numbers_of(series)
    if not not_numbers.any():
        whole = numbers.notna().all() and bool(np.all(np.mod(numbers.to_numpy(), 1) == 0))
        return numbers.astype("int64") if whole else numbers
    if not series.isna().any() and all(
        isinstance(v, str) and v.strip().lower() in ("true", "false") for v in present
    ):
        return to_bool(series)
    if all(is_iso_date(v) for v in present):
        return to_datetime(series)
    return series


CONVERTERS: dict[str, Callable[[pd.Series], pd.Series]] = {
    "auto": infer,
    "int": to_int,
    "float": to_float,
    "str": to_str,
    "bool": to_bool,
    "datetime": to_datetime,
}


@operation(
    "fix_dtype",
    FixDtypeParams,
    rank=3,
    description=(
        "Convert a column (or every column) to a type; 'auto' infers numbers (also '$1,200.50' "
        "text), true/false and ISO dates. Refuses any conversion that would lose values."
    ),
)
def fix_dtype(table: pd.DataFrame, params: FixDtypeParams, ctx: OpContext) -> OpResult:
    columns = require_columns(table, [params.column]) if params.column else list(table.columns)
    convert = CONVERTERS[params.dtype]
    result = table.copy()
    changes = []
    for column in columns:
        before = table[column]
        after = convert(before)
        if kind_of(after.dtype) != kind_of(before.dtype):
            result[column] = after
            changes.append(f"{column}: {kind_of(before.dtype)} -> {kind_of(after.dtype)}")
        elif after is not before:
            result[column] = after
    if not changes:
        return OpResult(result, f"No column changed type ({params.dtype}).")
    return OpResult(result, "Converted " + ", ".join(changes) + ".")
