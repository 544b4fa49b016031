"""Penalties for how the agent works, from the episode's history of accepted actions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

OUT_OF_ORDER = 0.08
IMMEDIATE_REPEAT = 0.02
LATE_STEPS = 0.05
LATE_FRACTION = 0.8
CAP = 0.25


@dataclass(frozen=True)
class ActionRecord:
    """One accepted step: canonical operation name, validated parameters, pipeline rank."""

    operation: str
    parameters: dict[str, Any]
    rank: int
    repeatable: bool


def penalty(history: Sequence[ActionRecord], max_steps: int) -> float:
    """Out-of-order steps (a lower rank than the step before), identical repeats of a
    non-fill step, and working past 80% of the step budget; capped at 0.25.

    Unknown or refused operations never reach the history (a refused step changes nothing),
    so they carry no penalty here; they simply do not happen.
    """
    total = 0.0
    previous: ActionRecord | None = None
    for record in history:
        if previous is not None:
            if record.rank < previous.rank:
                total += OUT_OF_ORDER
            elif (
                not record.repeatable
                and record.operation == previous.operation
                and record.parameters == previous.parameters
            ):
                total += IMMEDIATE_REPEAT
        previous = record
    if len(history) > LATE_FRACTION * max_steps:
        total += LATE_STEPS
    return min(CAP, total)
