"""The action space in a few lines per operation, for prompts that resend it every turn.

`GET /schema` publishes the action as a full JSON schema (every operation's parameter model,
with titles, `additionalProperties`, `anyOf` nulls: about 12 KB). A model needs far less to
act: the envelope and one `name(param: type, optional?: type = default) - description` line
per operation, which is what the LLM agent's prompt already shows. `verifiers`' OpenEnv
bridge resends the schema with every observation, so this is what it should send.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dataclean_env.agents.prompt import operation_lines
from dataclean_env.operations import alias_names, operation_names

ENVELOPE = '{"operation": "<name>", "parameters": {...}}'


def compact_action_schema(operations: Sequence[str] | None = None) -> dict[str, Any]:
    """The action envelope and one line per operation (default: every operation and alias).

    Keeps the JSON schema keys a generic client reads (`title`, `type`, `required`), so the
    verifiers bridge still maps a bare reply like `finish` to `{"operation": "finish"}`."""
    names = list(operations) if operations is not None else operation_names() + alias_names()
    return {
        "title": "CleaningAction",
        "type": "object",
        "required": ["operation"],
        "reply": ENVELOPE,
        "operations": [line.removeprefix("- ") for line in operation_lines(names)],
        "note": "A parameter marked ? is optional.",
    }
