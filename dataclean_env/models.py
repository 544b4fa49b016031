"""The environment's Action, Observation and State as OpenEnv types (for /ws and /schema).

They subclass the `openenv` package's types, so OpenEnv clients, TRL and `verifiers` see the
fields they expect (`done`, `reward`, `metadata`); the rest mirrors the REST contract.
"""

from __future__ import annotations

from copy import copy
from typing import Any, cast, get_origin

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from dataclean_env.openenv_light import skip_package_inits

skip_package_inits()  # the types module alone, not gradio (see openenv_light)

from openenv.core.env_server.types import Action as OpenEnvAction  # noqa: E402
from openenv.core.env_server.types import Observation as OpenEnvObservation  # noqa: E402
from openenv.core.env_server.types import State as OpenEnvState  # noqa: E402

from dataclean_env.engine.parsing import parse_action  # noqa: E402
from dataclean_env.errors import InvalidAction  # noqa: E402
from dataclean_env.operations import alias_names, get_operation, operation_names  # noqa: E402
from dataclean_env.schemas import (  # noqa: E402
    ActionFields,
    HistoryEntry,
    ObservationFields,
    Reward,
)


def _operation_variants(schema: dict[str, Any]) -> None:
    """Publish every operation and its parameter schema in the action's JSON schema."""
    names = operation_names() + alias_names()
    schema["properties"]["operation"]["enum"] = names
    schema["anyOf"] = [
        {
            "properties": {
                "operation": {"const": name},
                "parameters": _inlined(get_operation(name).params_model.model_json_schema()),
            }
        }
        for name in operation_names()
    ]


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with its nested models (report_errors' cells) written in place of their
    "#/$defs/..." references, which would not resolve inside the action's schema."""
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/") and ref[8:] in definitions:
                return inline(definitions[ref[8:]])
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    inlined: dict[str, Any] = inline(schema)
    return inlined


class CleaningAction(ActionFields, OpenEnvAction):
    """One operation: `{"operation": name, "parameters": {...}}` (also `{"action": {...}}`,
    `{"name", "params"}` and `{"action_type"}` spellings, as on the REST paths)."""

    model_config = ConfigDict(json_schema_extra=_operation_variants)

    @model_validator(mode="before")
    @classmethod
    def _envelope(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        metadata = data.get("metadata", {})
        try:
            action = parse_action({k: v for k, v in data.items() if k != "metadata"})
        except InvalidAction as exc:
            # A PydanticCustomError keeps the WebSocket open (a plain ValueError would not).
            raise PydanticCustomError(
                "invalid_action", "invalid action: {detail}", {"detail": exc.detail}
            ) from None
        return {
            "operation": action.operation,
            "parameters": action.parameters,
            "metadata": metadata,
        }


class CleaningObservation(ObservationFields, OpenEnvObservation):
    """The REST observation plus the absolute score, its components and the step's info.

    `reward` is the change in score this step made (the default reward mode), so a client
    that sums rewards gets final minus initial score; `score` is the absolute score."""

    # The REST fields come from ObservationFields, each given a default below
    # (`_with_empty_default`): OpenEnv makes an observation from no arguments.

    score: float | None = Field(
        default=0.0,
        description="Absolute episode score (the reward total); None while a blind episode runs.",
    )
    score_components: Reward | None = Field(
        default=None, description="The reward object: components, penalty and total."
    )
    info: dict[str, Any] = Field(
        default_factory=dict, description="Step info; `error` holds a refused action's code."
    )


class CleaningState(OpenEnvState):
    task_id: str | None = None
    seed: int | None = None
    split: str = "train"
    max_steps: int = 0
    steps_remaining: int = 0
    done: bool = False
    shape: list[int] = Field(default_factory=list)
    reward: Reward | None = None
    history: list[HistoryEntry] = Field(default_factory=list)
    # Real tables: exact precision, recall, F1 and cells changed (an int, as REST says it).
    repair: dict[str, float | int] | None = None


def _with_empty_default(field: FieldInfo) -> FieldInfo:
    """A required field of the REST observation as OpenEnv's observation holds it: with its
    type's empty value as default (a model's is None, so None is allowed too)."""
    relaxed = copy(field)
    kind = get_origin(field.annotation) or field.annotation
    if kind in (list, dict):
        relaxed.default_factory = kind
    elif kind in (str, int):
        relaxed.default = kind()
    elif isinstance(kind, type) and issubclass(kind, BaseModel):
        relaxed.annotation = cast(Any, kind | None)  # a type made at run time
        relaxed.default = None
    else:
        raise TypeError(f"no empty value for a field of type {field.annotation!r}")
    return relaxed


for _name, _field in ObservationFields.model_fields.items():
    if _field.is_required():
        CleaningObservation.__pydantic_fields__[_name] = _with_empty_default(_field)
CleaningObservation.model_rebuild(force=True)
