"""Read a model's reply as one action, tolerant of code fences and prose around the JSON.

The first JSON object in the reply (fenced blocks first) that is an action envelope wins:
`{"operation", "parameters"}`, `{"action": {...}}`, or the `{"name", "params"}` and
`{"action_type"}` spellings the server accepts; other keys (a "reason", say) are ignored.
Anything else is an `UnparseableReply` whose message says what was wrong, so the model can
be told and asked again.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from dataclean_env.errors import describe
from dataclean_env.schemas import Action

_ENVELOPE_KEYS = ("operation", "name", "action_type", "parameters", "params")
_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


class UnparseableReply(ValueError):
    """The reply holds no JSON action; the message says why."""


def parse_action(reply: str) -> dict[str, Any]:
    """The action in `reply` as `{"operation": ..., "parameters": {...}}`."""
    objects = [obj for block in _candidates(reply) for obj in _json_objects(block)]
    if not objects:
        raise UnparseableReply("no JSON object found in the reply")
    problems = []
    for obj in objects:
        if set(obj) == {"action"} and isinstance(obj["action"], dict):
            obj = obj["action"]
        # Models like to add a "reason" or "thought"; only the envelope matters.
        envelope = {k: v for k, v in obj.items() if k in _ENVELOPE_KEYS}
        try:
            action = Action.model_validate(envelope)
        except ValidationError as error:
            problems.append(describe(error, "action"))
            continue
        return {"operation": action.operation, "parameters": action.parameters}
    raise UnparseableReply(f"the JSON is not an action: {problems[0]}")


def _candidates(reply: str) -> list[str]:
    """Fenced blocks first (models put the answer there), then the whole reply."""
    return [*_FENCE.findall(reply), reply]


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object embedded in `text`, in order."""
    found, position = [], text.find("{")
    while position != -1:
        try:
            value, end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        position = text.find("{", end)
    return found
