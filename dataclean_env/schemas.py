"""Pydantic models at the edges: the action envelope, observation, reward, step result, state."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    model_serializer,
    model_validator,
)

_NAME_KEYS = ("operation", "name", "action_type")
MAX_OPERATION_NAME = 64  # characters of an operation's name or alias
MAX_EPISODE_ID = 128  # characters of an episode id
# The task and episode the API's examples (/docs' "Try it out", the README) play.
EXAMPLE_TASK_ID = "easy_dedup_rename"
EXAMPLE_EPISODE_ID = "my-run-1"
_PARAM_KEYS = ("parameters", "params")

SEED_BOUND = 2**63  # seeds are below it: what a 64-bit signed integer holds


M = TypeVar("M", bound=BaseModel)


def built(cls: type[M], values: dict[str, Any], fields_set: set[str] | None = None) -> M:
    """`cls.model_construct(fields_set, **values)` for values the engine made, already of
    the right types and named by field (no aliases): the same object, made without
    pydantic's per-field walk over aliases, which costs more than a small step's grading.
    Fields left out get their defaults, as `model_construct` gives them."""
    data = {}
    given = set()
    for name, field in cls.__pydantic_fields__.items():
        if name in values:
            data[name] = values[name]
            given.add(name)
        elif not field.is_required():
            data[name] = field.get_default(call_default_factory=True, validated_data=data)
    model = cls.__new__(cls)
    object.__setattr__(model, "__dict__", data)
    object.__setattr__(
        model, "__pydantic_fields_set__", given if fields_set is None else fields_set
    )
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    if cls.__pydantic_post_init__:
        model.model_post_init(None)
    return model


class ActionFields(BaseModel):
    """The action's fields, declared once for both wires: the REST `Action` below and
    OpenEnv's `models.CleaningAction` (which adds OpenEnv's `metadata`)."""

    operation: str = Field(
        min_length=1, max_length=MAX_OPERATION_NAME, description="Operation name or alias."
    )
    parameters: dict[str, Any] = Field(default_factory=dict, description="Operation parameters.")


class Action(ActionFields):
    """`{"operation": name, "parameters": {...}}`; `{"name", "params"}` and `{"action_type"}`
    spellings are accepted and mapped to the same envelope."""

    model_config = ConfigDict(extra="forbid", frozen=True)

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
    total_rows: int = Field(description="Rows in the current table.")
    total_columns: int = Field(description="Columns in the current table.")
    has_duplicates: bool = Field(description="Whether some rows are exact copies of others.")
    has_missing: bool = Field(description="Whether some cell is missing.")


class QueryResult(BaseModel):
    """What a `query` step found: its columns and first rows, cells written as the sample
    rows write them ("NULL" for missing, dates in ISO form)."""

    columns: list[str] = Field(description="The result's column names, in order.")
    rows: list[list[Any]] = Field(description="At most 50 result rows, each a list of cells.")
    total_rows: int = Field(description="Rows the query returned in all.")
    truncated: bool = Field(description="Whether rows were left out (total_rows > len(rows)).")


class ObservationFields(BaseModel):
    """The observation's fields, declared once for both wires: the REST `Observation` below
    and OpenEnv's `models.CleaningObservation` (which gives every field a default and adds
    OpenEnv's `done`, `reward`, `metadata` and the score)."""

    episode_id: str = Field(description="The episode; send it back to address this episode.")
    task_id: str = Field(description="The task (or generated family) being played.")
    step: int = Field(description="Accepted steps so far (refused actions do not count).")
    steps_remaining: int = Field(description="Accepted steps left before truncation.")
    dataset_info: DatasetInfo = Field(description="Size and overall state of the table.")
    columns: list[str] = Field(description="Column names, in order.")
    shape: list[int] = Field(description="[rows, columns] of the current table.")
    missing_values: dict[str, int] = Field(description="Missing cells per column.")
    dtypes: dict[str, str] = Field(description="pandas dtype per column.")
    duplicate_count: int = Field(description="Rows that exactly repeat an earlier row.")
    sample_rows: list[dict[str, Any]] = Field(
        description=(
            "Rows of the current table as records, from sample_offset: the first 5 until"
            ' show_rows picks another window (up to 50 rows); missing cells are "NULL".'
        )
    )
    sample_offset: int = Field(
        default=0, description="Position of the first sample row (moved by show_rows)."
    )
    available_operations: list[str] = Field(
        description="Operations this task accepts (their aliases, such as fill_missing_mean, "
        "are accepted too)."
    )
    task_description: str = Field(description="What the task asks: the rule card.")
    message: str = Field(
        default="", description="What the last step did, or why the action was refused."
    )
    # Phased tasks (the audit): the current phase and those after it; None elsewhere.
    phase: str | None = Field(default=None, description="The audit's current phase.")
    phases_left: list[str] | None = Field(
        default=None, description="The audit's phases after the current one."
    )
    column_profiles: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description=COLUMN_PROFILES_HELP
    )
    query_result: QueryResult | None = Field(
        default=None,
        description="A `query` step's result (columns, at most 50 rows, total_rows, "
        "truncated); null after any other step and after a refused action.",
    )


class Observation(ObservationFields):
    """What the agent sees after a reset or step. Never a gold value, never a score beyond
    the reward object that travels beside it."""


class Reward(BaseModel):
    """Every field is clamped to [0.0001, 0.9999] and rounded to 4 places.

    The fixed tasks report the five original components; generated tasks report repair,
    preservation and row integrity instead, and real tables net repair (the total) beside
    the cell-repair precision, recall and F1 of the literature. Components a task does not
    have are left out of the JSON."""

    total: float
    duplicate_score: float | None = None
    missing_score: float | None = None
    dtype_score: float | None = None
    outlier_score: float | None = None
    schema_score: float | None = None
    repair_score: float | None = None
    preservation_score: float | None = None
    row_integrity_score: float | None = None
    net_repair: float | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    # Tasks graded on claims (dataclean_env/grading/claim_graders.py): detection, standardisation,
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
    reward: Reward | None = Field(description="None while a blind episode runs (reward_mode)")
    done: bool
    info: dict[str, Any] = Field(default_factory=dict)
    _json: bytes | None = PrivateAttr(default=None)

    def json_bytes(self) -> bytes:
        """The result as JSON (what `model_dump_json` writes), written once: the engine writes
        it to check that a step can be served, and the REST door sends the same bytes.
        Results are built whole and never changed afterwards, so the bytes stay true."""
        if self._json is None:
            self._json = self.__pydantic_serializer__.to_json(self)
        return self._json


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
    # Real tables: exact cell-repair precision, recall, F1 and cells changed (else absent).
    repair: dict[str, float | int] | None = None

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
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
    version: str | None = Field(
        default=None,
        description="Generator version of a generated family (e.g. crm-v2); the plain task id "
        "always serves the current one. None for fixed and custom tasks.",
    )


class FamilyInfo(BaseModel):
    name: str
    task_ids: list[str]
    instantiate: str = Field(description="How a reset picks an instance of this family's tasks.")


class TaskList(BaseModel):
    tasks: list[TaskInfo]
    families: list[FamilyInfo]


class ResetRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        # A seed a browser's number holds exactly (the bound, 2**63, does not).
        json_schema_extra={"examples": [{"seed": 7, "episode_id": EXAMPLE_EPISODE_ID}]},
    )

    task_id: str | None = Field(default=None, description="Task to start (POST /reset only).")
    seed: int | None = Field(default=None, ge=0, lt=SEED_BOUND, description="Shuffles the rows.")
    episode_id: str | None = Field(default=None, description="Id for the new episode.")
    split: Literal["train", "eval", "test"] = Field(
        default="train", description="Seed stream of a generated family (others ignore it)."
    )
    reward_mode: Literal["delta", "absolute", "hidden"] = Field(
        default="delta",
        description='"hidden": no reward or score until the episode ends (a blind episode). '
        "REST always answers the reward object, so delta and absolute are the same here.",
    )


def graded(result: StepResult) -> Reward:
    """The reward of a result the engine made: only a door's blind view (reward_visibility)
    leaves it out, and that view never comes back into the engine's own callers."""
    if result.reward is None:
        raise ValueError("a blind step result has no reward")
    return result.reward
