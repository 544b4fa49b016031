"""validate_schema (report, change nothing) and finish (end the episode)."""

from __future__ import annotations

from collections.abc import Mapping

from dataclean_env.operations.registry import NoParams, OpContext, OpResult, operation
from dataclean_env.table.deferred import Table
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import Kind


def schema_report(snapshot: Snapshot, target: Mapping[str, Kind]) -> list[str]:
    """Mismatches between the table (its snapshot) and the target schema (names and kinds)."""
    problems = []
    missing = [c for c in target if c not in snapshot.kinds]
    extra = [c for c in snapshot.columns if c not in target]
    if missing:
        problems.append(f"missing columns {missing}")
    if extra:
        problems.append(f"unexpected columns {extra}")
    for column, kind in target.items():
        if column in snapshot.kinds and snapshot.kinds[column] != kind:
            problems.append(f"{column} is {snapshot.kinds[column]}, expected {kind}")
    return problems


@operation(
    "validate_schema",
    NoParams,
    rank=5,
    lazy=True,
    description="Report how the table differs from the target schema (names and types); changes nothing.",
)
def validate_schema(table: Table, params: NoParams, ctx: OpContext) -> OpResult:
    problems = schema_report(ctx.snapshot_of(table), ctx.target_schema)
    if not problems:
        return OpResult(table, "Schema matches the target schema.")
    return OpResult(table, "Schema mismatches: " + "; ".join(problems) + ".")


@operation(
    "finish",
    NoParams,
    rank=6,
    ends_episode=True,
    lazy=True,
    description="Declare the table clean and end the episode.",
)
def finish(table: Table, params: NoParams, ctx: OpContext) -> OpResult:
    return OpResult(table, "Episode finished.")
