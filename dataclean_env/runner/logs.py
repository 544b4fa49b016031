"""The graders' log lines, exactly as the contract spells them (one line each, stdout).

[START] task=<task_id> env=<env name> model=<model name>
[STEP] step=<n> action=<action text> reward=<x.xx> done=<true|false> error=<msg|null>
[END] success=<true|false> steps=<n> score=<x.xx> rewards=<r1,r2,...>
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dataclean_env import ENV_NAME


def one_line(text: str) -> str:
    """Any text as one line without runs of white space (log fields never break a line)."""
    return " ".join(str(text).split())


def field_name(name: str) -> str:
    """A value for a space-separated `key=value` field: no white space at all."""
    return "-".join(str(name).split()) or "unknown"


def action_text(action: dict[str, Any] | None) -> str:
    """Compact JSON of the action; `null` when the agent gave none that could be read."""
    if action is None:
        return "null"
    return one_line(json.dumps(action, separators=(",", ":"), ensure_ascii=False))


def start_line(task_id: str, model: str) -> str:
    return f"[START] task={field_name(task_id)} env={ENV_NAME} model={field_name(model)}"


def step_line(
    step: int, action: dict[str, Any] | None, reward: float, done: bool, error: str | None
) -> str:
    return (
        f"[STEP] step={step} action={action_text(action)} reward={reward:.2f} "
        f"done={str(done).lower()} error={one_line(error or '') or 'null'}"
    )


def end_line(success: bool, steps: int, score: float, rewards: Sequence[float]) -> str:
    return (
        f"[END] success={str(success).lower()} steps={steps} score={score:.2f} "
        f"rewards={','.join(f'{r:.2f}' for r in rewards)}"
    )
