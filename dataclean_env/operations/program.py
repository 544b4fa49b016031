"""program: several operations in one step, applied in order, all or nothing.

Each inner operation must be allowed by the task; `program` and `finish` cannot be inner
steps. If any inner step is refused, the whole program is, and the table is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pandas as pd
from pydantic import Field, ValidationError

from dataclean_env.errors import EnvError, InvalidParameters, OperationNotAllowed, describe
from dataclean_env.operations.registry import (
    CLAIM_OPERATIONS,
    OpContext,
    Operation,
    OpResult,
    Params,
    operation,
    resolve,
)
from dataclean_env.schemas import Action
from dataclean_env.table.limits import remaining

MAX_PROGRAM_STEPS = 20
# Steps that end, span, claim or reveal labels rather than change a table cannot be inner
# steps (the episode counts labels per step), nor `query`: its result is a field of the
# step's observation, which an inner step does not have.
NOT_INNER = frozenset({"program", "finish", "label", "query", *CLAIM_OPERATIONS})


def opened(plan: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """The plan's actions with every program opened up into its steps, one action each."""
    return [
        step
        for action in plan
        for step in (
            action["parameters"]["operations"] if action["operation"] == "program" else [action]
        )
    ]


class ProgramParams(Params):
    operations: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_PROGRAM_STEPS,
        description='Actions like {"operation": "strip", "parameters": {"column": "name"}}.',
    )


@operation(
    "program",
    ProgramParams,
    rank=0,
    repeatable=True,
    slow=True,
    description=f"Apply up to {MAX_PROGRAM_STEPS} operations in order as one step; all or nothing.",
)
def program(table: pd.DataFrame, params: ProgramParams, ctx: OpContext) -> OpResult:
    return run_actions(table, params.operations, ctx)


def run_actions(
    table: pd.DataFrame,
    actions: list[dict[str, Any]],
    ctx: OpContext,
    check: Callable[[int, Operation, Params], Params] | None = None,
) -> OpResult:
    """Validate every action (allowed by the task; none of `NOT_INNER`; `check` may refuse
    or adjust one), then apply them in order; a refused step refuses them all."""
    steps = []
    for index, raw in enumerate(actions, start=1):
        try:
            action = Action.model_validate(raw)
        except ValidationError as exc:
            raise InvalidParameters(
                f"step {index} is not an action: {describe(exc, 'action')}"
            ) from None
        op, op_params = resolve(action.operation, action.parameters)
        if op.name in NOT_INNER:
            raise InvalidParameters(f"step {index}: {op.name!r} cannot run inside a program")
        if ctx.allowed_operations is not None and op.name not in ctx.allowed_operations:
            raise OperationNotAllowed(f"step {index}: {op.name!r} is not available in this task")
        if check is not None:
            op_params = check(index, op, op_params)
        steps.append((op, op_params))

    messages, snapshot = [], ctx.snapshot
    for index, (op, op_params) in enumerate(steps, start=1):
        try:
            remaining(ctx.deadline)  # the deadline is the whole program's
            result = op.apply(table, op_params, replace(ctx, snapshot=snapshot))
        except EnvError as error:
            detail = f"step {index} ({op.name}): {error.detail}; nothing was applied"
            raise type(error)(detail) from error
        if result.table is not table:
            table, snapshot = result.table, result.snapshot
        messages.append(result.message)
    return OpResult(table, " | ".join(messages), snapshot)
