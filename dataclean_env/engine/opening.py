"""What every episode of one task instance starts from, derived once from the task's dirty
table and shared (`Task.derived`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dataclean_env.table.limits import TableBudget, default_limits
from dataclean_env.table.observation import table_summary
from dataclean_env.table.profiles import column_profiles
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.tasks import Task


@dataclass(frozen=True)
class Opening:
    """What an episode starts from, derived from its task's dirty table alone: the same for
    every episode of one task instance. Shared, so never changed (a step replaces these
    objects, it does not edit them)."""

    snapshot: Snapshot
    summary: dict[str, Any]  # `table_summary` at the first rows
    profiles: dict[str, dict[str, Any]]
    keyed: Any  # the table as the grader keyed it, or None
    scores: dict[str, float]
    budget: TableBudget  # under the default limits


def opening_of(task: Task) -> Opening:
    """The task's opening, computed on its first episode (two threads racing for it compute
    the same thing twice, harmlessly)."""
    opening = task.derived.get("opening")
    if opening is None:
        snapshot = Snapshot.of(task.dirty)
        scores, keyed = task.grader.graded(snapshot, None)
        summary, profiles = table_summary(snapshot), column_profiles(snapshot)
        budget = TableBudget(default_limits(), snapshot)
        opening = Opening(snapshot, summary, profiles, keyed, scores, budget)
        task.derived["opening"] = opening
    return opening
