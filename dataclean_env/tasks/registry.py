"""Tasks and the registry of task families.

A task is a dirty table, its grader (built from gold once) and a public spec. A family knows
a set of task ids and makes a task for an id and seed; adding a family means writing one
module that implements `TaskFamily` and listing it in `tasks/__init__.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

import numpy as np
import pandas as pd

from dataclean_env.errors import UnknownTask
from dataclean_env.grading import ActionRecord
from dataclean_env.table.limits import MAX_TABLE_CELLS
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import Kind


@dataclass(frozen=True)
class TaskSpec:
    task_id: str
    family: str
    difficulty: str
    description: str
    max_steps: int
    operations: tuple[str, ...]
    scoring: Mapping[str, float]
    target_schema: Mapping[str, Kind] = field(default_factory=dict)
    cells: int = 0  # size of the dirty table (rows x columns), for scheduling work
    protected_columns: frozenset[str] = frozenset()  # key columns no operation may change
    version: str | None = None  # a generated family's generator version, e.g. "crm-v2"
    # Tasks graded on claims: "detection", "standardisation" or "audit" ("clean" otherwise),
    # and the phases a phased task goes through in order.
    kind: str = "clean"
    phases: tuple[str, ...] = ()
    # Rows (tuples) `label` may reveal the clean values of in one episode; 0: no labels.
    label_budget: int = 0

    def public(self) -> dict[str, Any]:
        """What /tasks shows: never gold values or grader internals beyond the weights."""
        return {
            "task_id": self.task_id,
            "family": self.family,
            "difficulty": self.difficulty,
            "description": self.description,
            "max_steps": self.max_steps,
            "operations": list(self.operations),
            "scoring": dict(self.scoring),
            "version": self.version,
            "label_budget": self.label_budget,
        }


class TaskGrader(Protocol):
    """What an episode and its harnesses ask of a task's grader. Each family has its own
    (grading/: reward.Grader, preservation, cell_repair, and the claim graders)."""

    def components(self, snapshot: Snapshot) -> dict[str, float]: ...

    def combine(
        self, scores: Mapping[str, float], history: Sequence[ActionRecord], max_steps: int
    ) -> dict[str, float]: ...

    def gold_rows_missing(self, snapshot: Snapshot) -> int: ...

    # The abilities beyond scoring (`grading.abilities.GraderAbilities` answers for a
    # grader that lacks one).
    offers_labels: bool

    def graded(self, snapshot: Snapshot, previous: Any) -> tuple[dict[str, float], Any]: ...

    def repair_report(self, scores: Mapping[str, float]) -> dict[str, float | int] | None: ...

    def clean_rows(self, keys: Sequence[Any]) -> dict[str, dict[str, str] | None]: ...


@dataclass(frozen=True)
class Task:
    spec: TaskSpec
    dirty: pd.DataFrame
    grader: TaskGrader
    seed: int | None = None
    split: str = "train"
    # A reference plan that reaches gold (or as close as the operations allow). Never shown
    # to agents; the oracle baseline and the tests replay it.
    reference_plan: tuple[dict[str, Any], ...] = ()
    # What episodes derive from the dirty table before any step (`episode.opening_of`),
    # computed once: a task never changes, and the registry hands the same Task to every
    # reset of one instance. Not an init field: `dataclasses.replace` starts a new one.
    derived: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)


def shuffled(dirty: pd.DataFrame, seed: int | None) -> pd.DataFrame:
    """The dirty table an episode starts from: rows shuffled when a seed is given (a new
    table), else the table itself (an episode never changes its task's table). Graders align
    rows by key, so the shuffle changes what the agent sees, not the score."""
    if seed is None:
        return dirty
    order = np.random.default_rng(seed).permutation(len(dirty))
    return dirty.iloc[order].reset_index(drop=True)


class TaskFamily(Protocol):
    name: str
    instantiate: str  # how a reset picks an instance, for /tasks

    def specs(self) -> Iterable[TaskSpec]: ...

    def make(self, task_id: str, seed: int | None, split: str = "train") -> Task: ...


MADE_TASKS = 256  # instances the registry keeps for the resets that come back to them


class TaskRegistry:
    def __init__(self, families: Iterable[TaskFamily]):
        self._families: dict[str, TaskFamily] = {}
        self._specs: dict[str, TaskSpec] = {}
        # Folders or entries a family could not load (reported at start-up, then skipped).
        self.problems: list[str] = []
        for family in families:
            self.problems += getattr(family, "problems", [])
            for spec in family.specs():
                if spec.task_id in self._specs:
                    raise ValueError(f"task id {spec.task_id!r} defined twice")
                self._families[spec.task_id] = family
                self._specs[spec.task_id] = spec
        # Every family makes the same task for the same (task_id, seed, split), so resets of
        # one instance share one Task and what was derived from it (its opening).
        self._made = lru_cache(maxsize=MADE_TASKS)(self._make)

    def task_ids(self) -> list[str]:
        return list(self._specs)

    def family_name(self, task_id: str) -> str:
        """The family `task_id` is grouped in: the one grouping the README, the page (from
        `families`, in /tasks) and the run summaries share. (A spec's own `family` says how
        it is made: a claim task is drawn like a generated one, but grouped as claims.)"""
        self.spec(task_id)  # UnknownTask
        return self._families[task_id].name

    def families(self) -> list[dict[str, Any]]:
        """Each family with its task ids and how a reset instantiates them."""
        listed: dict[int, dict[str, Any]] = {}
        for task_id, family in self._families.items():
            entry = listed.setdefault(
                id(family), {"name": family.name, "task_ids": [], "instantiate": family.instantiate}
            )
            entry["task_ids"].append(task_id)
        return list(listed.values())

    def specs(self) -> list[TaskSpec]:
        return list(self._specs.values())

    def spec(self, task_id: str) -> TaskSpec:
        try:
            return self._specs[task_id]
        except KeyError:
            raise UnknownTask(
                f"unknown task {task_id!r}; known tasks: {', '.join(self._specs)}"
            ) from None

    def make(
        self, task_id: str, seed: int | None = None, split: str = "train", shared: bool = True
    ) -> Task:
        """A task to start an episode from. `split` picks the seed stream of generated
        families; fixed and custom tasks have one table and ignore it. The task of a small
        table is kept and handed to every reset of the instance; `shared=False` has its
        family make it anew (what the checker compares with)."""
        spec = self.spec(task_id)
        if shared and spec.cells <= MAX_TABLE_CELLS:
            return self._made(task_id, seed, split)
        return self._make(task_id, seed, split)

    def _make(self, task_id: str, seed: int | None, split: str) -> Task:
        return self._families[task_id].make(task_id, seed, split)
