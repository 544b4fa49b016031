"""remove_duplicates: drop repeated rows, keeping the first occurrence."""

from __future__ import annotations

from pydantic import Field

from dataclean_env.operations.column_checks import kept_rows, require_columns
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation
from dataclean_env.table.deferred import Table


class RemoveDuplicatesParams(Params):
    subset: list[str] | None = Field(
        default=None, min_length=1, description="Columns that define a duplicate (default: all)."
    )


@operation(
    "remove_duplicates",
    RemoveDuplicatesParams,
    rank=0,
    lazy=True,
    description="Drop exact duplicate rows (or rows repeating the `subset` columns), keeping the first.",
)
def remove_duplicates(table: Table, params: RemoveDuplicatesParams, ctx: OpContext) -> OpResult:
    snapshot = ctx.snapshot_of(table)
    subset = require_columns(snapshot, params.subset) if params.subset else None
    repeats = snapshot.duplicate_mask(subset)
    removed = sum(repeats)
    if not removed:
        return OpResult(table, "No duplicate rows found.")
    keep = [i for i, repeat in enumerate(repeats) if not repeat]
    message = f"Removed {removed} duplicate rows ({snapshot.n_rows} -> {len(keep)})."
    return kept_rows(table, snapshot, keep, message)


class DedupeParams(Params):
    keys: list[str] = Field(min_length=1, description="Columns that identify a record.")


@operation(
    "dedupe",
    DedupeParams,
    rank=0,
    lazy=True,
    description="Keep the first row of each combination of `keys` (drops near duplicates).",
)
def dedupe(table: Table, params: DedupeParams, ctx: OpContext) -> OpResult:
    return remove_duplicates(table, RemoveDuplicatesParams(subset=params.keys), ctx)
