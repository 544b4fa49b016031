"""Tool methods generated from the operation registry, in the form TRL turns into tool schemas.

TRL (through `transformers.utils.get_json_schema`) reads a tool's name, its signature's type
hints and defaults, and a Google-style docstring with one `Args:` line per parameter. Each
operation already states all of that in its parameter model (types, `Literal` choices,
defaults, field descriptions) and its description, so one function builds every tool and a new
operation becomes a tool without another line here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

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
        default = inspect.Parameter.empty if info.is_required() else info.default
        parameters.append(
            inspect.Parameter(
                field_name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=info.annotation,
            )
        )
        annotations[field_name] = info.annotation
        lines.append(f"    {field_name}: {_describe(field_name, info.description, default)}")

    def tool(self: Any, **arguments: Any) -> str:
        return str(self._act(name, arguments))

    tool.__name__ = tool.__qualname__ = name
    tool.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    tool.__annotations__ = {**annotations, "return": str}
    args = ["", "Args:", *lines] if lines else []
    tool.__doc__ = "\n".join([operation.description, *args, "", "Returns:", f"    {RETURNS}"])
    return tool


def _describe(field_name: str, description: str | None, default: Any) -> str:
    text = (description or f"The {field_name.replace('_', ' ')}.").replace("\n", " ").strip()
    if default is not inspect.Parameter.empty and default is not None:
        text += f" Default: {default!r}."
    return text
