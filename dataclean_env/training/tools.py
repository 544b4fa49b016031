"""Tool methods generated from the operation registry, in the form TRL turns into tool schemas.

TRL (through `transformers.utils.get_json_schema`) reads a tool's name, its signature's type
hints and defaults, and a Google-style docstring with one `Args:` line per parameter. Each
operation already states all of that in its parameter model (types, `Literal` choices,
defaults, field descriptions) and its description, so one function builds every tool and a new
operation becomes a tool without another line here. A parameter typed with a nested model
(the claims' `cells`) is offered as plain JSON objects, its fields named in the description:
TRL types plain Python types only, and the operation's model still checks every object.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from dataclean_env.operations import get_operation

RETURNS = "What the step did, the episode's score, and the table after the step."


def operation_tool(name: str) -> Callable[..., str]:
    """A method `name(self, **parameters) -> str` that calls `self._act(name, parameters)`.

    Every parameter is keyword-only; a required field has no default, an optional one its
    model's default (None when the model computes it)."""
    operation = get_operation(name)
    fields = operation.params_model.model_fields
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    lines = []
    for field_name, info in fields.items():
        default = _default(info)
        annotation = plain_type(info.annotation)
        parameters.append(
            inspect.Parameter(
                field_name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=annotation,
            )
        )
        annotations[field_name] = annotation
        description = _describe(field_name, info.description, default)
        description += "".join(_describe_model(model) for model in _models_in(info.annotation))
        lines.append(f"    {field_name}: {description}")

    def tool(self: Any, **arguments: Any) -> str:
        return str(self._act(name, arguments))

    tool.__name__ = tool.__qualname__ = name
    tool.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    tool.__annotations__ = {**annotations, "return": str}
    args = ["", "Args:", *lines] if lines else []
    tool.__doc__ = "\n".join([operation.description, *args, "", "Returns:", f"    {RETURNS}"])
    return tool


def _default(info: FieldInfo) -> Any:
    return inspect.Parameter.empty if info.is_required() else info.default


def _describe(field_name: str, description: str | None, default: Any) -> str:
    text = (description or f"The {field_name.replace('_', ' ')}.").replace("\n", " ").strip()
    if default is not inspect.Parameter.empty and default is not None:
        text += f" Default: {default!r}."
    return text


def plain_type(annotation: Any) -> Any:
    """The annotation with every pydantic model in it replaced by `dict[str, Any]`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return dict[str, Any]
    args = get_args(annotation)
    plain = tuple(plain_type(arg) for arg in args)
    if plain == args:  # no model inside (Literal's values end up here too)
        return annotation
    origin = get_origin(annotation)
    if origin in (Union, UnionType):  # `X | Y` has no subscriptable origin
        return Union[plain]  # noqa: UP007 (built from a tuple)
    return origin[plain]


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in get_args(annotation):
        yield from _models_in(arg)


def _describe_model(model: type[BaseModel]) -> str:
    fields = "; ".join(
        f"{name}{'' if info.is_required() else ' (optional)'}: "
        + _describe(name, info.description, _default(info)).rstrip(".")
        for name, info in model.model_fields.items()
    )
    return f" Each an object with {fields}."
