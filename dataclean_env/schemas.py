"""Pydantic models at the edges: the action envelope, observation, reward, step result, state."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

_NAME_KEYS = ("operation", "name", "action_type")
_PARAM_KEYS = ("parameters", "params")


class Action(BaseModel):
    """`{"operation": name, "parameters": {...}}`; `{"name", "params"}` and `{"action_type"}`
    spellings are accepted and mapped to the same envelope."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operation: str = Field(min_length=1, max_length=64, description="Operation name or alias.")
    parameters: dict[str, Any] = Field(default_factory=dict, description="Operation parameters.")

    @model_validator(mode="before")
    @classmethod
    def _accept_spellings(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        names = [k for k in _NAME_KEYS if k in data]
        params = [k for k in _PARAM_KEYS if k in data]
        if len(names) > 1 or len(params) > 1:
            raise ValueError("give the operation and its parameters once each")
        rest = {k: v for k, v in data.items() if k not in _NAME_KEYS + _PARAM_KEYS}
        out: dict[str, Any] = dict(rest)
        if names:
            out["operation"] = data[names[0]]
        if params:
            out["parameters"] = {} if data[params[0]] is None else data[params[0]]
        return out


COLUMN_PROFILES_HELP = (
    "Per column, computed from the current table (never gold): `non_null` count, `distinct` "
    "count, `top_values` as [value, count] pairs (at most 5, most frequent first), for text "
    "columns `shapes` as [shape, count] pairs (digits shown as 9, capitals as A, small "
    "letters as a: `3/14/2024` -> `9/99/9999`; at most 5), and `min`/`max` for numeric and "
    "date columns."
)


class DatasetInfo(BaseModel):
    total_rows: int
    total_columns: int
    has_duplicates: bool
    has_missing: bool


class Observation(BaseModel):
    episode_id: str
    task_id: str
    step: int
    steps_remaining: int
    dataset_info: DatasetInfo
    columns: list[str]
    shape: list[int]
    missing_values: dict[str, int]
    dtypes: dict[str, str]
    duplicate_count: int
    sample_rows: list[dict[str, Any]]
    sample_offset: int = 0  # position of the first sample row (moved by show_rows)
    available_operations: list[str]
    task_description: str
    message: str = ""
    # Phased tasks (the audit): the current phase and those after it; None elsewhere.
    phase: str | None = None
    phases_left: list[str] | None = None
    column_profiles: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description=COLUMN_PROFILES_HELP
    )


class Reward(BaseModel):
    """Every field is clamped to [0.0001, 0.9999] and rounded to 4 places.

    The fixed tasks report the five original components; generated tasks report repair,
    preservation and row integrity instead, and custom (real) tables the cell-repair
    precision, recall and F1 (the total). Components a task does not have are left out of
    the JSON."""

    total: float
    duplicate_score: float | None = None
    missing_score: float | None = None
    dtype_score: float | None = None
    outlier_score: float | None = None
    schema_score: float | None = None
    repair_score: float | None = None
    preservation_score: float | None = None
    row_integrity_score: float | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    # Tasks graded on claims (dataclean_env/grading/claims.py): detection, standardisation,
    # and the audit's four phases.
    detection_precision: float | None = None
    detection_recall: float | None = None
    detection_f1: float | None = None
    type_accuracy: float | None = None
    standardisation_score: float | None = None
    cell_share: float | None = None
    audit_score: float | None = None
    identify_score: float | None = None
    fix_score: float | None = None
    validate_score: float | None = None
    penalty: float

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, handler: Any) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None}


class StepResult(BaseModel):
    observation: Observation
    reward: Reward
    done: bool
    info: dict[str, Any] = Field(default_factory=dict)


class HistoryEntry(BaseModel):
    step: int
    operation: str
    parameters: dict[str, Any]
    message: str


class EpisodeState(BaseModel):
    episode_id: str
    task_id: str
    seed: int | None
    split: str
    step_count: int
    max_steps: int
    steps_remaining: int
    done: bool
    shape: list[int]
    reward: Reward
    history: list[HistoryEntry]
    # Real tables: exact cell-repair precision, recall, F1 and cells changed (else absent).
    repair: dict[str, float | int] | None = None

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        if data.get("repair") is None:
            data.pop("repair", None)
        return data


class TaskInfo(BaseModel):
    task_id: str
    family: str
    difficulty: str
    description: str
    max_steps: int
    operations: list[str]
    scoring: dict[str, float]


class FamilyInfo(BaseModel):
    name: str
    task_ids: list[str]
    instantiate: str = Field(description="How a reset picks an instance of this family's tasks.")


class TaskList(BaseModel):
    tasks: list[TaskInfo]
    families: list[FamilyInfo]


class ResetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    task_id: str | None = Field(default=None, description="Task to start (POST /reset only).")
    seed: int | None = Field(default=None, ge=0, lt=2**63, description="Shuffles the rows.")
    episode_id: str | None = Field(default=None, description="Id for the new episode.")
    split: Literal["train", "eval", "test"] = Field(
        default="train", description="Seed stream of a generated family (others ignore it)."
    )
