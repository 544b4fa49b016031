"""validate_schema (report, change nothing) and finish (end the episode)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from dataclean_env.operations.registry import NoParams, OpContext, OpResult, operation
from dataclean_env.values import Kind, kind_of


def schema_report(table: pd.DataFrame, target: Mapping[str, Kind]) -> list[str]:
    """Mismatches between the table and the target schema (names and kinds)."""
    problems = []
    missing = [c for c in target if c not in table.columns]
    extra = [c for c in table.columns if c not in target]
    if missing:
        problems.append(f"missing columns {missing}")
    if extra:
        problems.append(f"unexpected columns {extra}")
    for column, kind in target.items():
        if column in table.columns and kind_of(table[column].dtype) != kind:
            problems.append(f"{column} is {kind_of(table[column].dtype)}, expected {kind}")
    return problems


@operation(
    "validate_schema",
    NoParams,
    rank=5,
    description="Report how the table differs from the target schema (names and types); changes nothing.",
)
def validate_schema(table: pd.DataFrame, params: NoParams, ctx: OpContext) -> OpResult:
    problems = schema_report(table, dict(ctx.target_schema))
    if not problems:
        return OpResult(table, "Schema matches the target schema.")
    return OpResult(table, "Schema mismatches: " + "; ".join(problems) + ".")


@operation(
    "finish",
    NoParams,
    rank=6,
    ends_episode=True,
    description="Declare the table clean and end the episode.",
)
def finish(table: pd.DataFrame, params: NoParams, ctx: OpContext) -> OpResult:
    return OpResult(table, "Episode finished.")
