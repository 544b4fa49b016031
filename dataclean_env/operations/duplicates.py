"""remove_duplicates: drop repeated rows, keeping the first occurrence."""

from __future__ import annotations

import operator
from itertools import compress

import pandas as pd
from pydantic import Field

from dataclean_env.operations.column_checks import require_columns, take_rows
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation


class RemoveDuplicatesParams(Params):
    subset: list[str] | None = Field(
        default=None, min_length=1, description="Columns that define a duplicate (default: all)."
    )


@operation(
    "remove_duplicates",
    RemoveDuplicatesParams,
    rank=0,
    description="Drop exact duplicate rows (or rows repeating the `subset` columns), keeping the first.",
)
def remove_duplicates(
    table: pd.DataFrame, params: RemoveDuplicatesParams, ctx: OpContext
) -> OpResult:
    subset = require_columns(table, params.subset) if params.subset else None
    snapshot = ctx.snapshot_of(table)
    repeats = snapshot.duplicate_mask(subset)
    removed = sum(repeats)
    if not removed:
        return OpResult(table, "No duplicate rows found.")
    keep = list(compress(range(len(repeats)), map(operator.not_, repeats)))
    result = take_rows(table, keep)
    message = f"Removed {removed} duplicate rows ({len(table)} -> {len(result)})."
    return OpResult(result, message, snapshot.with_rows(keep))


class DedupeParams(Params):
    keys: list[str] = Field(min_length=1, description="Columns that identify a record.")


@operation(
    "dedupe",
    DedupeParams,
    rank=0,
    description="Keep the first row of each combination of `keys` (drops near duplicates).",
)
def dedupe(table: pd.DataFrame, params: DedupeParams, ctx: OpContext) -> OpResult:
    return remove_duplicates(table, RemoveDuplicatesParams(subset=params.keys), ctx)
