"""Operations of the tasks graded on what the agent claims (detection, standardisation, audit).

* `report_errors{cells}`: claim cells (or whole rows) are wrong; reports accumulate.
* `standardise{transforms}`: per column, a list of registry operations run on that column.
* `audit{categories, summary}` -> `identify{cells}` -> `fix{operations}` ->
  `validate{issues_remaining, report}`: the audit's four phases, in this order. A phase may
  be repeated while it is the current one; going back or skipping ahead is refused with
  `PHASE_OUT_OF_ORDER`. `validate` ends the episode.

Each task kind allows only its own operations (`TaskSpec.operations`), and no message says
whether a claim is right: the claims are graded, not answered.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd
from pydantic import Field, ValidationError

from dataclean_env.errors import InvalidParameters, OperationNotAllowed, PhaseOutOfOrder
from dataclean_env.grading.gold_facts import key_text
from dataclean_env.grading.truth import ERROR_TYPES, error_type
from dataclean_env.operations.column_checks import sample
from dataclean_env.operations.program import run_actions
from dataclean_env.operations.registry import (
    CLAIM_OPERATIONS,
    OpContext,
    OpResult,
    Params,
    canonical_name,
    get_operation,
    operation,
)
from dataclean_env.schemas import Action

MAX_CLAIMS = 5000  # cells in one report
MAX_FIX_STEPS = 200
MAX_TRANSFORM_STEPS = 20
AUDIT_PHASES = ("audit", "identify", "fix", "validate")
# What a transform may use: operations that rewrite the values of one column in place.
TRANSFORMS = frozenset(
    {
        "strip",
        "lower",
        "upper",
        "title",
        "replace",
        "map",
        "regex_replace",
        "replace_missing",
        "normalize_dates",
        "phone_us",
        "decimal2",
        "fix_dtype",
        "clamp_outliers",
    }
)
# What a fix may use: the cleaning operations (never a claim, a phase or finish).
LABEL_OPERATION = "label"  # reveals clean values: only labelled variants offer it
FIX_OPERATIONS = TRANSFORMS | {
    "set_cell",
    "drop_rows",
    "dedupe",
    "fill_missing",
    "fd_repair",
    "sql",
}
TYPES_TEXT = ", ".join(ERROR_TYPES)


class CellClaim(Params):
    row_id: int | str = Field(description="Key value of the row (the task's row id).")
    column: str | None = Field(
        default=None, description="The column; leave it out to claim the whole row."
    )
    error_type: str | None = Field(default=None, description=f"One of: {TYPES_TEXT}.")


class ReportParams(Params):
    cells: list[CellClaim] = Field(max_length=MAX_CLAIMS, description="The cells claimed wrong.")


def check_claims(cells: list[CellClaim], ctx: OpContext, table: pd.DataFrame) -> None:
    """Refuse claims that name no cell of the table or an unknown error type (what the
    table itself shows, never gold)."""
    snapshot = ctx.snapshot_of(table)
    if len(ctx.protected_columns) != 1:
        raise OperationNotAllowed("this task has no key column, so cells cannot be named")
    key = next(iter(ctx.protected_columns))
    ids = {key_text(v) for v in snapshot.values[key]}
    unknown_rows = [c.row_id for c in cells if key_text(c.row_id) not in ids]
    if unknown_rows:
        raise InvalidParameters(f"no row has {key} = {sample(unknown_rows)}")
    unknown_columns = [
        c.column for c in cells if c.column is not None and c.column not in snapshot.columns
    ]
    if unknown_columns:
        raise InvalidParameters(f"unknown columns {sample(unknown_columns)}")
    bad_types = [
        c.error_type for c in cells if c.error_type is not None and not error_type(c.error_type)
    ]
    if bad_types:
        raise InvalidParameters(
            f"unknown error types {sample(bad_types)}; use one of: {TYPES_TEXT}"
        )


@operation(
    "report_errors",
    ReportParams,
    rank=0,
    repeatable=True,
    description=(
        "Claim cells are wrong: cells=[{row_id, column?, error_type?}] (no column: the whole "
        "row). Reports accumulate; scored by cell-level F1 when the episode ends."
    ),
)
def report_errors(table: pd.DataFrame, params: ReportParams, ctx: OpContext) -> OpResult:
    check_claims(params.cells, ctx, table)
    return OpResult(table, f"Recorded {len(params.cells)} claimed cells.")


# ── standardisation ─────────────────────────────────────────────────────────
class StandardiseParams(Params):
    transforms: dict[str, list[dict[str, Any]]] = Field(
        min_length=1,
        max_length=50,
        description=(
            'Column -> operations run on that column, e.g. {"phone": [{"operation": '
            '"phone_us"}]}; the column is filled in for each operation.'
        ),
    )


def _on_column(column: str, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps with `column` filled in; a step that names another column is refused."""
    filled = []
    for index, raw in enumerate(steps, start=1):
        try:
            action = Action.model_validate(raw)
        except ValidationError as exc:
            raise InvalidParameters(
                f"{column!r} step {index} is not an action: {exc.errors()[0]['msg']}"
            ) from None
        name = canonical_name(action.operation)
        if name not in TRANSFORMS:
            raise InvalidParameters(
                f"{column!r} step {index}: {action.operation!r} is not a column transform; "
                f"use {', '.join(sorted(TRANSFORMS))}"
            )
        parameters = dict(action.parameters)
        field = "column" if "column" in get_operation(name).params_model.model_fields else "columns"
        wanted = column if field == "column" else [column]
        if parameters.get(field, wanted) != wanted:
            raise InvalidParameters(f"{column!r} step {index}: a transform works on its own column")
        parameters[field] = wanted
        filled.append({"operation": action.operation, "parameters": parameters})
    return filled


@operation(
    "standardise",
    StandardiseParams,
    rank=2,
    repeatable=True,
    slow=True,  # it may run regex_replace
    description="Per column, run a transform (a list of column operations) on every cell.",
)
def standardise(table: pd.DataFrame, params: StandardiseParams, ctx: OpContext) -> OpResult:
    snapshot = ctx.snapshot_of(table)
    unknown = [c for c in params.transforms if c not in snapshot.columns]
    if unknown:
        raise InvalidParameters(f"unknown columns {sample(unknown)}")
    protected = [c for c in params.transforms if c in ctx.protected_columns]
    if protected:
        raise InvalidParameters(f"{sample(protected)} is the protected key")
    messages = []
    for column, steps in params.transforms.items():
        if len(steps) > MAX_TRANSFORM_STEPS:
            raise InvalidParameters(f"{column!r}: at most {MAX_TRANSFORM_STEPS} operations")
    for column, steps in params.transforms.items():
        if not steps:
            continue
        result = run_actions(
            table, _on_column(column, steps), replace(ctx, allowed_operations=TRANSFORMS)
        )
        if result.table is not table:
            table, ctx = result.table, replace(ctx, snapshot=result.snapshot)
        messages.append(f"{column}: {result.message}")
    return OpResult(table, " || ".join(messages) or "No transform given.", ctx.snapshot)


# ── the audit pipeline ──────────────────────────────────────────────────────
def require_phase(history: tuple[str, ...], phase: str) -> None:
    """Refuse `phase` unless it is the current phase or the next one."""
    done = [AUDIT_PHASES.index(name) for name in history if name in AUDIT_PHASES]
    current = max(done) if done else -1
    wanted = AUDIT_PHASES.index(phase)
    if wanted < current:
        raise PhaseOutOfOrder(
            f"the {phase!r} phase is over; the audit is at {AUDIT_PHASES[current]!r} "
            f"(order: {' -> '.join(AUDIT_PHASES)})"
        )
    if wanted > current + 1:
        raise PhaseOutOfOrder(
            f"{phase!r} comes after {AUDIT_PHASES[wanted - 1]!r}; next phase: "
            f"{AUDIT_PHASES[current + 1]!r} (order: {' -> '.join(AUDIT_PHASES)})"
        )


def phase_view(phases: tuple[str, ...], history: list[str]) -> tuple[str | None, list[str] | None]:
    """(current phase, phases after it) of a phased task; (None, None) for others. The
    current phase is the last one started, or the first before any."""
    if not phases:
        return None, None
    done = [phases.index(name) for name in history if name in phases]
    current = max(done) if done else 0
    return phases[current], list(phases[current + 1 :])


class AuditParams(Params):
    categories: list[str] = Field(max_length=len(ERROR_TYPES), description=f"Of: {TYPES_TEXT}.")
    summary: str = Field(default="", max_length=4000, description="Free text (not scored).")


@operation(
    "audit",
    AuditParams,
    rank=0,
    repeatable=True,
    description="Phase 1 of 4: name the error categories present in the table.",
)
def audit(table: pd.DataFrame, params: AuditParams, ctx: OpContext) -> OpResult:
    require_phase(ctx.history, "audit")
    bad = [c for c in params.categories if not error_type(c)]
    if bad:
        raise InvalidParameters(f"unknown categories {sample(bad)}; use one of: {TYPES_TEXT}")
    return OpResult(table, f"Audit recorded ({len(params.categories)} categories).")


@operation(
    "identify",
    ReportParams,
    rank=1,
    repeatable=True,
    description="Phase 2 of 4: claim the wrong cells, like report_errors (claims accumulate).",
)
def identify(table: pd.DataFrame, params: ReportParams, ctx: OpContext) -> OpResult:
    require_phase(ctx.history, "identify")
    check_claims(params.cells, ctx, table)
    return OpResult(table, f"Recorded {len(params.cells)} identified cells.")


class FixParams(Params):
    operations: list[dict[str, Any]] = Field(
        max_length=MAX_FIX_STEPS,
        description="Registry operations applied in order, all or nothing (like program).",
    )


@operation(
    "fix",
    FixParams,
    rank=2,
    repeatable=True,
    slow=True,  # it may run sql and regex_replace
    description="Phase 3 of 4: repair the table with registry operations, all or nothing.",
)
def fix(table: pd.DataFrame, params: FixParams, ctx: OpContext) -> OpResult:
    require_phase(ctx.history, "fix")
    if not params.operations:
        return OpResult(table, "No fix applied.")
    return run_actions(table, params.operations, replace(ctx, allowed_operations=FIX_OPERATIONS))


class ValidateParams(Params):
    issues_remaining: int = Field(ge=0, le=10**9, description="Errors the table still holds.")
    report: str = Field(default="", max_length=4000, description="Free text (not scored).")


@operation(
    "validate",
    ValidateParams,
    rank=3,
    ends_episode=True,
    description="Phase 4 of 4: say how many errors remain; ends the episode.",
)
def validate(table: pd.DataFrame, params: ValidateParams, ctx: OpContext) -> OpResult:
    require_phase(ctx.history, "validate")
    return OpResult(table, "Validation recorded; audit finished.")


def cleaning_operation_names() -> list[str]:
    """Every operation but those of the claim task kinds (which only their kinds allow) and
    `label` (which only a labelled variant offers)."""
    from dataclean_env.operations import operation_names  # the registry, once filled

    return [
        name
        for name in operation_names()
        if name not in CLAIM_OPERATIONS and name != LABEL_OPERATION
    ]
