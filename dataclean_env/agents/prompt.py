"""What the LLM agent is shown: the task, the observation, the operations and its history.

The operation list comes from the operation registry (the same parameter schemas that
`GET /schema` publishes), limited to the operations the observation says are available.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dataclean_env.operations import alias_names, canonical_name, get_operation, with_aliases

SYSTEM_PROMPT = (
    "You clean a dirty data table for a data-cleaning environment, one operation per turn. "
    "Each turn you see the task, the table's schema, missing counts and sample rows, the "
    "operations you may use and what your previous actions did. Choose the single next "
    "operation that brings the table closer to what the task asks for; use `finish` once "
    "it is clean. Reply with exactly one JSON object and nothing else: "
    '{"operation": "<name>", "parameters": {...}}'
)
REPLY_REMINDER = 'Reply with exactly one JSON object: {"operation": "<name>", "parameters": {...}}'


@dataclass(frozen=True)
class Turn:
    """One of the agent's earlier actions and the environment's answer to it."""

    action: dict[str, Any] | None  # None: the reply could not be read as an action
    outcome: str


def operation_lines(available: Sequence[str]) -> list[str]:
    """`name(param: type, optional?: type = default) - description` per available operation,
    then one line naming the shorthands (aliases) that are also accepted."""
    known_aliases = set(alias_names())
    lines = [f"- {_signature(name)}" for name in available if name not in known_aliases]
    aliases = [name for name in available if name in known_aliases]
    if aliases:
        targets = ", ".join(dict.fromkeys(canonical_name(a) for a in aliases))
        lines.append(f"- also accepted: {', '.join(aliases)} (shorthands of {targets})")
    return lines


def _signature(name: str) -> str:
    operation = get_operation(name)
    schema = operation.params_model.model_json_schema()
    required = set(schema.get("required", ()))
    params = []
    for param, spec in schema.get("properties", {}).items():
        text = f"{param}{'' if param in required else '?'}: {_type_text(spec)}"
        if spec.get("default") is not None:
            text += f" = {json.dumps(spec['default'])}"
        params.append(text)
    return f"{name}({', '.join(params)}) - {operation.description}"


def _type_text(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return "|".join(str(v) for v in spec["enum"])
    if "anyOf" in spec:
        kinds = [_type_text(s) for s in spec["anyOf"] if s.get("type") != "null"]
        return " or ".join(dict.fromkeys(kinds))
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list of {_type_text(spec.get('items', {}))}"
    if kind == "object":
        return "object"
    return {"string": "text", "integer": "int", "number": "number"}.get(kind, str(kind))


def user_message(observation: dict[str, Any], turns: Sequence[Turn]) -> str:
    columns = observation["columns"]
    rows, _ = observation["shape"]
    missing, dtypes = observation["missing_values"], observation["dtypes"]
    parts = [
        f"Task: {observation['task_description']}",
        "Operations you may use (a parameter marked ? is optional):",
        *operation_lines(with_aliases(observation["available_operations"])),
        "",
        f"Table: {rows} rows x {len(columns)} columns, "
        f"{observation['duplicate_count']} exact duplicate rows. Step {observation['step']}, "
        f"{observation['steps_remaining']} steps left.",
        "Columns (name: dtype, missing cells):",
        *(f"- {c}: {dtypes.get(c, '?')}, {missing.get(c, 0)} missing" for c in columns),
        f"Rows from position {observation.get('sample_offset', 0)} (missing cells shown as NULL):",
        *(json.dumps(row, ensure_ascii=False, default=str) for row in observation["sample_rows"]),
        "",
        f"Last result: {observation['message']}",
        *query_lines(observation.get("query_result")),
    ]
    if observation.get("phase"):  # the audit: which phase now, which after it
        later = ", ".join(observation.get("phases_left") or []) or "none"
        parts.append(f"Phase: {observation['phase']} (then: {later}).")
    if turns:
        parts.append("Your actions so far:")
        parts += [
            f"{i}. {json.dumps(t.action) if t.action else '(unreadable reply)'} -> {t.outcome}"
            for i, t in enumerate(turns, 1)
        ]
    parts.append(REPLY_REMINDER)
    return "\n".join(parts)


def query_lines(result: dict[str, Any] | None) -> list[str]:
    """A `query` step's result as the model reads it: its columns, then one JSON list per
    row (the step's message says how many there were); nothing for other steps."""
    if not result:
        return []
    return [
        f"Query result columns: {json.dumps(result['columns'], ensure_ascii=False)}",
        *(json.dumps(row, ensure_ascii=False, default=str) for row in result["rows"]),
    ]


def retry_message(error: str) -> str:
    """Sent after a reply that held no readable action, with what was wrong."""
    return f"Your reply could not be read as an action ({error}). {REPLY_REMINDER}"
