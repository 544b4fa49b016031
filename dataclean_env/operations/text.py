"""Text clean-up: strip, lower, upper, title, and whole-cell replace, map and regex_replace.

They work on text columns only (one, or every unprotected text column), leave missing cells
missing, and never change a column's type. `regex_replace` runs with a time limit, so a
pathological pattern is refused rather than stalling the server; `compile_pattern` refuses
a pattern whose compiling alone would (see there).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import regex
from pydantic import Field

from dataclean_env.errors import InvalidParameters
from dataclean_env.operations.column_checks import rewrite_cells, text_columns
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation
from dataclean_env.table.limits import raise_time_limit, remaining

Scalar = str | int | float | bool
REGEX_SECONDS = 0.5  # per cell, and never past the step's deadline
# The regex module unrolls a counted repeat inside another, so `(?:a{2000}){2000}` compiles to
# 4,000,000 steps: a second and a gigabyte, before any time limit applies. The product of a
# pattern's counted repeats bounds that, nested or not (counting them all over-counts, never
# under-counts); 10,000 compiles in milliseconds. Verbose mode, where a count may hold
# spaces and comments (`{ 2000}`, `{2#c\n000}`), is refused, so every count is `{digits}`.
MAX_REPEAT_PRODUCT = 10_000
_COUNTED_REPEAT = regex.compile(r"\{(\d*),?(\d*)\}")
_VERBOSE_FLAG = regex.compile(r"\(\?[\w-]*x[\w-]*[:)]")  # (?x), (?sx:...), (?-x) alike


def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """A client's pattern, compiled (and not kept in the module's cache), or InvalidParameters."""
    if _VERBOSE_FLAG.search(pattern):
        raise InvalidParameters("invalid pattern: verbose mode ((?x)) is not accepted")
    product = 1
    for low, high in _COUNTED_REPEAT.findall(pattern):
        product *= max(1, int(high or 0), int(low or 0))
    if product > MAX_REPEAT_PRODUCT:
        raise InvalidParameters(
            f"invalid pattern: its counted repeats ({{n}}, {{n,m}}) multiply to more than "
            f"{MAX_REPEAT_PRODUCT:,}; use + or * for long runs"
        )
    try:
        return regex.compile(pattern, cache_pattern=False)
    except regex.error as exc:
        raise InvalidParameters(f"invalid pattern: {exc}") from None


class TextColumnParams(Params):
    column: str | None = Field(default=None, description="One text column (default: all).")


def _case_operation(name: str, rewrite: Any, what: str) -> None:
    @operation(name, TextColumnParams, rank=2, repeatable=True, description=what)
    def apply(table: pd.DataFrame, params: TextColumnParams, ctx: OpContext) -> OpResult:
        columns = text_columns(table, ctx, params.column)
        return rewrite_cells(
            table,
            ctx,
            columns,
            lambda v: rewrite(v) if isinstance(v, str) else v,
            name,
            text_method=rewrite,
        )


_case_operation("strip", str.strip, "Trim spaces at both ends of text cells.")
_case_operation("lower", str.lower, "Lower-case text cells.")
_case_operation("upper", str.upper, "Upper-case text cells.")
_case_operation("title", str.title, "Title-case text cells ('ana lópez' -> 'Ana López').")


class ReplaceParams(Params):
    column: str = Field(description="A text column.")
    old_value: Scalar = Field(description="Whole-cell value to replace.")
    new_value: Scalar = Field(description="Its replacement.")


@operation(
    "replace",
    ReplaceParams,
    rank=2,
    repeatable=True,
    description="Replace every cell equal to `old_value` in a text column by `new_value`.",
)
def replace(table: pd.DataFrame, params: ReplaceParams, ctx: OpContext) -> OpResult:
    columns = text_columns(table, ctx, params.column)
    old, new = str(params.old_value), _text(params.new_value)
    return rewrite_cells(table, ctx, columns, lambda v: new if v == old else v, "replace")


class MapParams(Params):
    column: str = Field(description="A text column.")
    mapping: dict[str, Scalar] = Field(
        min_length=1, max_length=1000, description="Whole-cell value -> replacement."
    )


@operation(
    "map",
    MapParams,
    rank=2,
    repeatable=True,
    description="Map whole cell values of a text column (e.g. category aliases to one name).",
)
def map_values(table: pd.DataFrame, params: MapParams, ctx: OpContext) -> OpResult:
    columns = text_columns(table, ctx, params.column)
    mapping = {old: _text(new) for old, new in params.mapping.items()}
    return rewrite_cells(table, ctx, columns, lambda v: mapping.get(v, v), "map")


class RegexReplaceParams(Params):
    column: str = Field(description="A text column.")
    pattern: str = Field(min_length=1, max_length=200, description="A regular expression.")
    replacement: str = Field(max_length=200, description="Replacement; \\1 refers to a group.")


@operation(
    "regex_replace",
    RegexReplaceParams,
    rank=2,
    repeatable=True,
    slow=True,
    description="Regular-expression substitution in a text column (time-limited).",
)
def regex_replace(table: pd.DataFrame, params: RegexReplaceParams, ctx: OpContext) -> OpResult:
    columns = text_columns(table, ctx, params.column)
    compiled = compile_pattern(params.pattern)

    def substitute(value: str) -> str:
        # The regex module releases the GIL while matching and stops at `timeout`, so a
        # catastrophic pattern costs at most the step's remaining time.
        left = remaining(ctx.deadline)
        timeout = REGEX_SECONDS if left is None else min(REGEX_SECONDS, left)
        return compiled.sub(params.replacement, value, timeout=timeout)

    try:
        return rewrite_cells(table, ctx, columns, substitute, "regex_replace")
    except (regex.error, IndexError) as exc:  # a bad group reference shows on the first match
        raise InvalidParameters(f"invalid replacement: {exc}") from None
    except TimeoutError:
        raise_time_limit()
        raise  # unreachable: raise_time_limit always raises


def _text(value: Scalar) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
