"""What a client sent, read into typed requests: the reset options and the action envelope
(the REST body, the /ws message and a Python dict all go through here).

Every validation error a client sees is written by `errors.describe`, so the same bad
request reads the same at every door.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from dataclean_env.errors import InvalidAction, describe
from dataclean_env.schemas import Action, ResetRequest

# Fields OpenEnv clients add to their requests; accepted and ignored at every door.
OPENENV_EXTRAS = ("request_id", "timeout_s")


def parse_reset_options(options: Mapping[str, Any], subject: str = "reset") -> ResetRequest:
    """The one parser of reset options (task_id, seed, split, episode_id, reward_mode),
    typed; `subject` names the options in an error that points at no field."""
    fields = {k: v for k, v in options.items() if k not in OPENENV_EXTRAS}
    try:
        return ResetRequest.model_validate(fields)
    except ValidationError as exc:
        raise InvalidAction(describe(exc, subject)) from None


def parse_action(raw: Action | Mapping[str, Any] | Any, subject: str = "action") -> Action:
    """The one parser of the action envelope: an Action, an envelope (any of the spellings
    `Action` accepts) or `{"action": envelope}`. `subject` names the envelope in an error
    that points at no field."""
    if isinstance(raw, Action):
        return raw
    if isinstance(raw, Mapping) and "action" in raw:
        beside = sorted(k for k in raw if k != "action")
        if beside:
            raise InvalidAction(f"unexpected fields beside 'action': {beside}")
        raw = raw["action"]
    if not isinstance(raw, Mapping):
        raise InvalidAction(
            'the action must be a JSON object like {"operation": ..., "parameters": {...}}'
        )
    try:
        return Action.model_validate(dict(raw))
    except ValidationError as exc:
        raise InvalidAction(describe(exc, subject)) from None
