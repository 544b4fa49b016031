"""Read-only operations that scale with the table: every value or shape of a column with
its count, paged, and the rows whose cell holds a value or matches a pattern.

They change nothing; what they found is the step's message (JSON after a colon), so an
agent sees a 2,400-row table's columns in a few steps instead of paging through its rows.
Values and shapes are those of the column profiles (`profiles.py`), counted in full.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Literal

from pydantic import Field

from dataclean_env.errors import InvalidParameters
from dataclean_env.operations.column_checks import require_columns
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation
from dataclean_env.operations.text import REGEX_SECONDS, compile_pattern
from dataclean_env.table.deferred import Table
from dataclean_env.table.limits import raise_time_limit, remaining
from dataclean_env.table.profiles import value_shape
from dataclean_env.table.values import MISSING, json_cell

MAX_LISTED = 200  # values (or shapes) one value_counts step lists
MAX_FOUND = 50  # rows one find_rows step shows


class ValueCountsParams(Params):
    column: str
    by: Literal["value", "shape"] = Field(
        default="value", description="Values, or shapes (9 digit, A/a letter)."
    )
    offset: int = Field(default=0, ge=0, description="Skip this many.")
    limit: int = Field(default=50, ge=1, le=MAX_LISTED)


@operation(
    "value_counts",
    ValueCountsParams,
    rank=5,
    repeatable=True,
    lazy=True,
    description="A column's values (or shapes) with counts, paged.",
)
def value_counts(table: Table, params: ValueCountsParams, ctx: OpContext) -> OpResult:
    snapshot = ctx.snapshot_of(table)
    require_columns(snapshot, [params.column])
    values = snapshot.values[params.column]
    present = [v for v in values if v is not MISSING]
    counts = Counter(value_shape(v) if params.by == "shape" else v for v in present)
    # Ties in a fixed order (by the value's text), so the pages never depend on row order.
    ranked = sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))
    page = ranked[params.offset : params.offset + params.limit]
    listed = [[json_cell(v), n] for v, n in page]
    return OpResult(
        table,
        f"{params.column}: {len(ranked)} distinct {params.by}s, {len(values) - len(present)} "
        f"empty; {params.by}s {params.offset}..{params.offset + len(page) - 1} with counts: "
        + json.dumps(listed, ensure_ascii=False),
    )


class FindRowsParams(Params):
    column: str
    value: str | int | float | bool | None = Field(
        default=None, description="Whole cell (null: empty)."
    )
    pattern: str | None = Field(default=None, max_length=200, description="Or a regex.")
    offset: int = Field(default=0, ge=0, description="Skip this many.")
    limit: int = Field(default=MAX_FOUND, ge=1, le=MAX_FOUND)


@operation(
    "find_rows",
    FindRowsParams,
    rank=5,
    repeatable=True,
    lazy=True,
    slow=True,
    description="Rows whose `column` is `value` or matches `pattern`.",
)
def find_rows(table: Table, params: FindRowsParams, ctx: OpContext) -> OpResult:
    snapshot = ctx.snapshot_of(table)
    require_columns(snapshot, [params.column])
    values = snapshot.values[params.column]
    matches = _matcher(params, ctx)
    try:
        found = [i for i, v in enumerate(values) if matches(v)]
    except TimeoutError:
        raise_time_limit()
        raise  # unreachable: raise_time_limit always raises
    page = found[params.offset : params.offset + params.limit]
    rows = [{c: json_cell(snapshot.values[c][i]) for c in snapshot.columns} for i in page]
    return OpResult(
        table,
        f"{len(found)} rows match; rows {params.offset}..{params.offset + len(page) - 1}: "
        + json.dumps(rows, ensure_ascii=False),
    )


def _matcher(params: FindRowsParams, ctx: OpContext) -> Any:
    if params.pattern is not None:
        if "value" in params.model_fields_set:
            raise InvalidParameters("give `value` or `pattern`, not both")
        compiled = compile_pattern(params.pattern)

        def search(value: Any) -> bool:
            if value is MISSING:
                return False
            left = remaining(ctx.deadline)
            timeout = REGEX_SECONDS if left is None else min(REGEX_SECONDS, left)
            return compiled.search(str(json_cell(value)), timeout=timeout) is not None

        return search
    if params.value is None:
        return lambda value: value is MISSING
    wanted = str(params.value).lower() if isinstance(params.value, bool) else str(params.value)
    return lambda value: value is not MISSING and str(json_cell(value)) == wanted
