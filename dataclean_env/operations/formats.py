"""Value formats: null-like tokens to missing, dates to ISO, US phone numbers, two decimals.

`normalize_dates` and `phone_us` rewrite only the cells they can read unambiguously and
report the rest; `decimal2` refuses a column with values that are not numbers. EU-written
numbers need no operation of their own: `eu_number_steps` is the regex recipe for them.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from dataclean_env.errors import OperationFailed
from dataclean_env.operations.column_checks import (
    replace_columns,
    require_columns,
    require_modifiable,
    rewrite_cells,
    sample,
    text_columns,
)
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation
from dataclean_env.table.values import MISSING, numbers_in

# "1.234,50 €" -> "1234.50": drop thousands dots, spaces and the euro sign, then the decimal
# comma becomes a point; fix_dtype reads the result.
EU_NUMBER_REWRITES = ((r"[.\s€]", ""), (",", "."))


def eu_number_steps(column: str) -> list[dict[str, Any]]:
    """The regex_replace actions that make EU-written numbers in `column` readable."""
    return [
        {
            "operation": "regex_replace",
            "parameters": {"column": column, "pattern": pattern, "replacement": replacement},
        }
        for pattern, replacement in EU_NUMBER_REWRITES
    ]


class ReplaceMissingParams(Params):
    tokens: list[str] = Field(
        min_length=1, max_length=20, description="Null-like tokens, e.g. ['N/A', 'null', '-']."
    )
    columns: list[str] | None = Field(
        default=None, min_length=1, description="Text columns (default: all text columns)."
    )


@operation(
    "replace_missing",
    ReplaceMissingParams,
    rank=2,
    repeatable=True,
    description="Turn null-like text tokens (compared trimmed, case-insensitively) into missing.",
)
def replace_missing(table: pd.DataFrame, params: ReplaceMissingParams, ctx: OpContext) -> OpResult:
    if params.columns is None:
        columns = text_columns(table, ctx, None)
    else:
        columns = [c for name in params.columns for c in text_columns(table, ctx, name)]
    tokens = {t.strip().lower() for t in params.tokens}
    return rewrite_cells(
        table,
        ctx,
        columns,
        lambda v: MISSING if isinstance(v, str) and v.strip().lower() in tokens else v,
        "replace_missing",
    )


Convention = Literal["us", "eu", "iso"]
_SLASHED = re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$")
_ISO = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
_NAMED = ("%b %d, %Y", "%B %d, %Y", "%d %b %Y", "%d %B %Y")


def to_iso(text: str, convention: Convention) -> str | None:
    """The ISO date a text means under the convention for day/month order, else None."""
    value = text.strip()
    try:
        if match := _ISO.match(value):
            year, month, day = map(int, match.groups())
            return dt.date(year, month, day).isoformat()
        if (match := _SLASHED.match(value)) and convention != "iso":
            first, second, year = map(int, match.groups())
            month, day = (first, second) if convention == "us" else (second, first)
            return dt.date(year, month, day).isoformat()
        for pattern in _NAMED:
            try:
                return dt.datetime.strptime(value, pattern).date().isoformat()
            except ValueError:
                continue
    except ValueError:  # an impossible date such as 02/30/2024
        return None
    return None


class NormalizeDatesParams(Params):
    column: str = Field(description="A text column of dates.")
    convention: Convention = Field(
        description="How to read dd/dd/yyyy: us (month first), eu (day first), iso (refuse)."
    )


@operation(
    "normalize_dates",
    NormalizeDatesParams,
    rank=2,
    repeatable=True,
    description="Rewrite dates in mixed formats as ISO text (YYYY-MM-DD) under a day/month convention.",
)
def normalize_dates(table: pd.DataFrame, params: NormalizeDatesParams, ctx: OpContext) -> OpResult:
    return rewrite_readable(
        table,
        ctx,
        params.column,
        lambda text: to_iso(text, params.convention),
        "normalize_dates",
        f"not a date under {params.convention}",
    )


def rewrite_readable(
    table: pd.DataFrame,
    ctx: OpContext,
    column: str,
    read: Callable[[str], str | None],
    what: str,
    unreadable: str,
) -> OpResult:
    """Rewrite the text cells `read` understands; leave the others and say which they are."""
    unread: list[object] = []

    def rewrite(value: object) -> object:
        new = read(value) if isinstance(value, str) else None
        if new is None:
            unread.append(value)
            return value
        return new

    result = rewrite_cells(table, ctx, text_columns(table, ctx, column), rewrite, what)
    if not unread:
        return result
    note = f" Left as they were ({unreadable}): {sample(unread)}."
    return OpResult(result.table, result.message + note, result.snapshot)


def to_us_phone(text: str) -> str | None:
    digits = re.sub(r"\D", "", text)
    if len(digits) == 11 and digits.startswith("1"):
        digits = digits[1:]
    if len(digits) != 10:
        return None
    return f"({digits[:3]}) {digits[3:6]}-{digits[6:]}"


class ColumnParams(Params):
    column: str = Field(description="The column to rewrite.")


@operation(
    "phone_us",
    ColumnParams,
    rank=2,
    repeatable=True,
    description="Rewrite US phone numbers as (XXX) XXX-XXXX; others are left and reported.",
)
def phone_us(table: pd.DataFrame, params: ColumnParams, ctx: OpContext) -> OpResult:
    return rewrite_readable(
        table, ctx, params.column, to_us_phone, "phone_us", "not a 10-digit US number"
    )


@operation(
    "decimal2",
    ColumnParams,
    rank=2,
    repeatable=True,
    description="Make a column numeric with two decimals ('$1,234.5' -> 1234.5); refuses non-numbers.",
)
def decimal2(table: pd.DataFrame, params: ColumnParams, ctx: OpContext) -> OpResult:
    require_columns(table, [params.column])
    require_modifiable(ctx, [params.column])
    snapshot = ctx.snapshot_of(table)
    numbers, bad = numbers_in(
        snapshot.values[params.column], snapshot.kinds[params.column], max_bad=3
    )
    if bad:
        raise OperationFailed(
            f"column {params.column!r} has values that are not numbers: {sample(bad)}"
        )
    rounded = pd.Series(np.round(numbers, 2), index=table.index, name=params.column)
    changed = {params.column: rounded}
    return OpResult(
        replace_columns(table, changed),
        f"decimal2: {params.column} as numbers with two decimals.",
        snapshot.with_columns(changed),
    )
