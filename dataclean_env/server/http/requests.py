"""Reading request bodies (bounded in size and time by `HttpGuard`): JSON, and the ids a
step body may carry."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from pydantic import BaseModel, ConfigDict

from dataclean_env.engine.parsing import OPENENV_EXTRAS, parse_action
from dataclean_env.errors import InvalidAction, InvalidJson, InvalidText
from dataclean_env.schemas import EXAMPLE_EPISODE_ID, EXAMPLE_TASK_ID, Action


async def read_json(request: Request) -> dict[str, Any]:
    """The body as a JSON object ({} when empty); 422 if it is not one."""
    body = await request.body()
    if not body.strip():
        return {}
    data = parse_json(body)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InvalidAction("request body must be a JSON object")
    return data


# A lone surrogate can only arrive as a JSON escape (\ud800-\udfff) or as its (invalid)
# UTF-8 bytes, which json.loads accepts; bodies without either skip the full check.
_MAYBE_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


# What a body holding a lone UTF-16 surrogate is refused with, on every route.
INVALID_TEXT = "the body holds text that is not valid Unicode (a lone UTF-16 surrogate)"


def parse_json(body: bytes) -> Any:
    """The JSON value of `body`; InvalidAction if it is not JSON, InvalidText if it holds a
    lone UTF-16 surrogate (such text could never be sent back, so it is refused here)."""
    try:
        data = json.loads(body, parse_constant=_not_json)
    except (ValueError, RecursionError) as exc:
        # ValueError covers bad UTF-8, bad JSON and integers past Python's 4300-digit limit;
        # RecursionError covers absurdly deep nesting.
        raise InvalidJson(f"invalid JSON {where_json_fails(exc)}") from None
    if has_invalid_text(body, data):
        raise InvalidText(INVALID_TEXT)
    return data


def where_json_fails(exc: ValueError | RecursionError) -> str:
    """Where and why `json.loads` failed, for people: the line and column of a syntax error
    (as an editor counts them), else what the text holds that JSON readers refuse."""
    if isinstance(exc, json.JSONDecodeError):
        return f"at line {exc.lineno}, column {exc.colno}: {exc.msg}"
    if isinstance(exc, RecursionError):
        return "(it is nested too deeply)"
    if isinstance(exc, UnicodeDecodeError):
        return f"(it is not UTF-8: byte {exc.start})"
    return f"({exc})"


def _not_json(constant: str) -> Any:
    # Python's json reads NaN and Infinity, which JSON does not have (and "nan" would
    # then become a text cell).
    raise ValueError(f"{constant} is not JSON")


def has_invalid_text(raw: bytes, data: Any) -> bool:
    """True when `data` (parsed from `raw`) holds a string that is not valid Unicode."""
    return _MAYBE_SURROGATE.search(raw) is not None and not _valid_text(data)


def _valid_text(data: Any) -> bool:
    """True when every string in `data` (keys too) can be encoded as UTF-8."""
    stack = [data]
    while stack:  # iterative: json.loads already bounded the depth
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


class StepRequest(BaseModel):
    """Documentation of the accepted step body; parsing is done by `parse_step`."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "task_id": EXAMPLE_TASK_ID,
                    "episode_id": EXAMPLE_EPISODE_ID,
                    "operation": "remove_duplicates",
                    "parameters": {},
                }
            ]
        }
    )

    task_id: str | None = None
    episode_id: str | None = None
    operation: str | None = None
    parameters: dict[str, Any] | None = None
    action: Action | None = None


@dataclass(frozen=True)
class StepCall:
    task_id: str | None
    episode_id: str | None
    action: Action


def _text(value: Any, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidAction(f"{field} must be a string")
    return value


def parse_step(body: dict[str, Any]) -> StepCall:
    """The task and episode ids a step body may carry, and its action (`parsing.parse_action`:
    an envelope, or `{"action": envelope}`)."""
    body = {k: v for k, v in body.items() if k not in OPENENV_EXTRAS}
    task_id = _text(body.pop("task_id", None), "task_id")
    episode_id = _text(body.pop("episode_id", None), "episode_id")
    return StepCall(task_id, episode_id, parse_action(body, "body"))
