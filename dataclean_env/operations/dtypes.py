"""fix_dtype: convert columns to int, float, str, bool or datetime, or infer the type (auto).

A conversion never loses information: a value that cannot be read as the target type, a
fractional number cast to int, or a missing value in an int/bool column refuses the whole
step with a message naming the offending values, and the table is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from dataclean_env.errors import OperationFailed
from dataclean_env.operations.column_checks import (
    replace_columns,
    require_columns,
    require_modifiable,
    sample,
)
from dataclean_env.operations.registry import OpContext, OpResult, Params, alias, operation
from dataclean_env.table.deferred import Table, derive
from dataclean_env.table.values import (
    EXACT_INT,
    MISSING,
    Kind,
    all_iso_dates,
    is_iso_date,
    numbers_in,
    parse_bool,
)

Dtype = Literal["auto", "int", "float", "str", "bool", "datetime"]


class FixDtypeParams(Params):
    dtype: Dtype = Field(default="auto", description="Target type; auto infers it per column.")
    column: str | None = Field(default=None, description="One column (default: every column).")


@dataclass(frozen=True)
class Converted:
    """A converted column as `pd.Series(data, dtype=dtype)` takes it; the Series itself is
    built with the table (deferred), its snapshot cells read from `data` where that is exact."""

    data: Any
    dtype: Any = None  # None: the data's own (a numpy array)
    cells: list[Any] | None = None  # the snapshot cells, when the converter knows them

    def series(self, index: pd.Index, name: str) -> pd.Series:
        column: pd.Series = pd.Series(self.data, index=index, dtype=self.dtype, name=name)
        return column

    def plain_cells(self) -> tuple[list[Any], np.dtype] | None:
        """(snapshot cells, dtype) for numpy numbers and Python booleans, whose cells are
        what `tolist` gives; None for other data (their cells are read from a Series)."""
        data = self.data
        if self.cells is not None:
            return self.cells, data.dtype
        if isinstance(data, np.ndarray) and data.dtype.kind in "if" and self.dtype is None:
            return data.tolist(), data.dtype
        if isinstance(data, np.ndarray) and data.dtype.kind == "f" and self.dtype == "float64":
            return [MISSING if v != v else v for v in data.tolist()], data.dtype
        if self.dtype is bool:
            return list(data), np.dtype(bool)
        return None


@dataclass(frozen=True)
class Column:
    """One column as a converter sees it: name, snapshot values, kind."""

    name: str
    values: list[Any]
    kind: Kind

    @cached_property  # converters ask for it more than once on a large column
    def present(self) -> list[Any]:
        if MISSING not in self.values:  # a C scan; most columns are complete
            return self.values
        return [v for v in self.values if v is not MISSING]

    def series(self, data: Any, dtype: Any = None) -> Converted:
        return Converted(data, dtype)


# A converter returns the converted column, or None when the column already has that type.
Converter = Callable[[Column], "Converted | None"]


def _numbers(column: Column) -> np.ndarray:
    numbers, bad = numbers_in(column.values, column.kind, max_bad=3)
    if bad:
        raise OperationFailed(
            f"column {column.name!r} has values that are not numbers: {sample(dict.fromkeys(bad))}"
        )
    return numbers


def _refuse_inexact(column: Column, numbers: np.ndarray) -> None:
    huge = numbers[np.abs(numbers) > EXACT_INT]
    if huge.size:
        raise OperationFailed(
            f"column {column.name!r} has whole numbers too large to convert exactly "
            f"({sample(huge.tolist())}); keep it as it is or cast it to str"
        )


def _whole(numbers: np.ndarray) -> bool:
    """Every value is a whole number that int64 holds exactly (NaN is not whole)."""
    return bool(np.all(np.mod(numbers, 1) == 0) and np.all(np.abs(numbers) <= EXACT_INT))


def to_float(column: Column) -> Converted | None:
    if column.kind == Kind.FLOAT:
        return None
    numbers = _numbers(column)
    if column.kind == Kind.INT:
        _refuse_inexact(column, numbers)
    return column.series(numbers, "float64")


def to_int(column: Column) -> Converted | None:
    if column.kind == Kind.INT:
        return None
    numbers = _numbers(column)
    missing = int(np.isnan(numbers).sum())
    if missing:
        raise OperationFailed(
            f"column {column.name!r} has {missing} missing values; "
            "fill them first or use dtype 'float'"
        )
    _refuse_inexact(column, numbers)
    fractional = numbers[np.mod(numbers, 1) != 0]
    if fractional.size:
        raise OperationFailed(
            f"column {column.name!r} has fractional values ({sample(fractional.tolist())}); "
            "casting to int would lose them"
        )
    return column.series(numbers.astype("int64"))


def _text(value: Any) -> Any:
    if value is MISSING:
        return np.nan
    if isinstance(value, pd.Timestamp):
        return str(value.date()) if value == value.normalize() else value.isoformat()
    if isinstance(value, bool | np.bool_):
        return str(bool(value)).lower()
    return str(value)


def to_str(column: Column) -> Converted | None:
    if column.kind == Kind.STR:
        return None
    return column.series([_text(v) for v in column.values], object)


def to_bool(column: Column) -> Converted | None:
    if column.kind == Kind.BOOL:
        return None
    if len(column.present) != len(column.values):
        raise OperationFailed(
            f"column {column.name!r} has missing values; fill them before casting to bool"
        )
    parsed = [parse_bool(v) for v in column.values]
    bad = [v for v, p in zip(column.values, parsed, strict=True) if p is None]
    if bad:
        raise OperationFailed(
            f"column {column.name!r} has values that are not booleans: {sample(bad)}"
        )
    return column.series(parsed, bool)


def to_datetime(column: Column) -> Converted | None:
    if column.kind == Kind.DATETIME:
        return None
    present = column.present
    bad = [] if all_iso_dates(present) else [v for v in present if not is_iso_date(v)]
    if not bad:  # every present value is text
        values = column.values
        if present is values:
            texts = list(map(str.strip, values))
        else:
            texts = ["NaT" if v is MISSING else v.strip() for v in values]
        # numpy reads each distinct text once; a large column repeats its dates.
        distinct = list(dict.fromkeys(texts))
        number = dict(zip(distinct, range(len(distinct)), strict=True))
        try:
            parsed = np.array(distinct, dtype="datetime64[ns]")
        except ValueError:  # well-formed but impossible, like 2024-02-30
            bad = [v for v in column.present if _impossible_date(v)]
        else:
            picks = list(map(number.__getitem__, texts))
            # The cells a datetime64[ns] Series gives, boxed once per distinct date (boxing
            # costs more than the rest of the conversion; equal cells share one Timestamp).
            boxed = [
                MISSING if t == "NaT" else pd.Timestamp(p)
                for t, p in zip(distinct, parsed, strict=True)
            ]
            cells = list(map(boxed.__getitem__, picks))
            return Converted(parsed[np.array(picks, dtype=np.intp)], cells=cells)
    raise OperationFailed(
        f"column {column.name!r} has values that are not ISO dates (YYYY-MM-DD): {sample(bad)}"
    )


def _impossible_date(value: Any) -> bool:
    try:
        np.datetime64(str(value).strip())
    except ValueError:
        return True
    return False


def infer(column: Column) -> Converted | None:
    """The most specific type every present value fits: int, float, bool, datetime or as is."""
    if column.kind in (Kind.INT, Kind.BOOL, Kind.DATETIME):
        return None
    present = column.present
    if not present:
        return None
    numbers, bad = numbers_in(column.values, column.kind, max_bad=1)
    if not bad:
        if _whole(numbers):
            return column.series(numbers.astype("int64"))
        return None if column.kind == Kind.FLOAT else column.series(numbers, "float64")
    if len(present) == len(column.values) and all(
        isinstance(v, str) and v.strip().lower() in ("true", "false") for v in present
    ):
        return to_bool(column)
    if all_iso_dates(present):
        try:
            return to_datetime(column)
        except OperationFailed:
            return None
    return None


CONVERTERS: dict[str, Converter] = {
    "auto": infer,
    Kind.INT: to_int,
    Kind.FLOAT: to_float,
    Kind.STR: to_str,
    Kind.BOOL: to_bool,
    Kind.DATETIME: to_datetime,
}


@operation(
    "fix_dtype",
    FixDtypeParams,
    rank=3,
    lazy=True,
    description=(
        "Convert a column (or every column) to a type; 'auto' infers numbers (also '$1,200.50' "
        "text), true/false and ISO dates. Refuses any conversion that would lose values."
    ),
)
def fix_dtype(table: Table, params: FixDtypeParams, ctx: OpContext) -> OpResult:
    snapshot = ctx.snapshot_of(table)
    if params.column:
        names = require_columns(snapshot, [params.column])
        require_modifiable(ctx, names)
    else:
        names = [c for c in snapshot.columns if c not in ctx.protected_columns]
    convert = CONVERTERS[params.dtype]
    changed: dict[str, Converted] = {}
    for name in names:
        converted = convert(Column(name, snapshot.values[name], snapshot.kinds[name]))
        if converted is not None:
            changed[name] = converted
    if not changed:
        return OpResult(table, f"No column changed type ({params.dtype}).")
    plain, read = {}, {}
    for name, converted in changed.items():
        cells = converted.plain_cells()
        if cells is not None:
            plain[name] = cells
        else:  # dates, text: the Series' own cells (any index gives the same)
            read[name] = converted.series(pd.RangeIndex(snapshot.n_rows), name)
    result = snapshot.with_values(plain).with_columns(read)
    listed = ", ".join(f"{n}: {snapshot.kinds[n]} -> {result.kinds[n]}" for n in changed)

    def build(frame: pd.DataFrame) -> pd.DataFrame:
        return replace_columns(frame, {n: c.series(frame.index, n) for n, c in changed.items()})

    return OpResult(derive(table, build), f"Converted {listed}.", result)


alias("cast_type", "fix_dtype")
alias("integer", "fix_dtype", dtype="int")
