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


class Reward(BaseModel):
    """Every field is clamped to [0.0001, 0.9999] and rounded to 4 places.

    The fixed tasks report the five original components; custom (and generated) tasks report
    repair, preservation and row integrity instead. Components a task does not have are
    left out of the JSON."""

    total: float
    duplicate_score: float | None = None
    missing_score: float | None = None
    dtype_score: float | None = None
    outlier_score: float | None = None
    schema_score: float | None = None
    repair_score: float | None = None
    preservation_score: float | None = None
    row_integrity_score: float | None = None
    penalty: float

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, handler: Any) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None}


class StepResult(BaseModel):
    observation: Observation
    reward: Reward | None = Field(description="None while a blind episode runs (reward_mode)")
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
    reward: Reward | None  # None while a blind episode runs (reward_mode="hidden")
    history: list[HistoryEntry]


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
    reward_mode: Literal["delta", "absolute", "hidden"] = Field(
        default="delta",
        description='"hidden": no reward or score until the episode ends (a blind episode). '
        "REST always answers the reward object, so delta and absolute are the same here.",
    )
