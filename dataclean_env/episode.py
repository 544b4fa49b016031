"""One episode: a task's table, the accepted steps so far, and the step budget.

Every door (REST, in-process, later OpenEnv) ends in `Episode.step`. A step either commits
a new table and history entry, or raises a typed error and leaves the episode exactly as it
was. Callers serialise steps on one episode with `episode.lock`.
"""

from __future__ import annotations

import logging
import math
import threading
from typing import Any

import pandas as pd

from dataclean_env.errors import EnvError, EpisodeFinished, OperationFailed, OperationNotAllowed
from dataclean_env.grading import ActionRecord
from dataclean_env.observation import SAMPLE_ROWS, table_summary
from dataclean_env.operations import OpContext, OpResult, alias_names, canonical_name, resolve
from dataclean_env.schemas import (
    Action,
    EpisodeState,
    HistoryEntry,
    Observation,
    Reward,
    StepResult,
)
from dataclean_env.snapshot import Snapshot
from dataclean_env.tasks import Task
from dataclean_env.values import MISSING

log = logging.getLogger(__name__)


def available_operations(allowed: tuple[str, ...]) -> list[str]:
    """The task's operations followed by the aliases of those operations."""
    aliases = [a for a in alias_names() if canonical_name(a) in allowed]
    return list(allowed) + aliases


class Episode:
    def __init__(self, episode_id: str, task: Task):
        self.episode_id = episode_id
        self.task = task
        self.spec = task.spec
        self.table: pd.DataFrame = task.dirty
        self.history: list[ActionRecord] = []
        self.messages: list[str] = []
        self.done = False
        self.lock = threading.Lock()
        self.last_used = 0.0  # set by the store that holds the episode
        self.blind = False  # reward_mode="hidden": the doors hide the score until done
        self._operations = available_operations(self.spec.operations)
        self._allowed = frozenset(self.spec.operations)
        self._snapshot = Snapshot.of(self.table)
        self._window = (0, SAMPLE_ROWS)  # the rows observations sample; show_rows moves it
        self._summary = table_summary(self._snapshot)
        self._scores = task.grader.components(self._snapshot)
        self.reward = self._grade()
        self.last_message = "Episode started. " + self.spec.description

    # ── stepping ──────────────────────────────────────────────────────────
    def step(self, action: Action) -> StepResult:
        """Apply one action; raises EnvError (and changes nothing) if it is refused."""
        if self.done:
            raise EpisodeFinished(
                f"episode {self.episode_id!r} is finished; reset to start a new one"
            )
        op, params = resolve(action.operation, action.parameters)
        if op.name not in self.spec.operations:
            raise OperationNotAllowed(
                f"operation {op.name!r} is not available in task {self.spec.task_id!r}; "
                f"available: {', '.join(self._operations)}"
            )
        context = OpContext(
            self.spec.target_schema,
            self._snapshot,
            protected_columns=self.spec.protected_columns,
            allowed_operations=self._allowed,
        )
        try:
            result = op.apply(self.table, params, context)
        except EnvError:
            raise
        except Exception as exc:  # a pandas corner we did not foresee: refuse, never 500
            log.exception("operation %s failed unexpectedly", op.name)
            raise OperationFailed(f"{op.name} could not be applied: {exc}") from exc
        snapshot = self._snapshot if result.table is self.table else _servable(result)

        record = ActionRecord(op.name, params.model_dump(exclude_none=True), op.rank, op.repeatable)
        self.history.append(record)
        self.messages.append(result.message)
        changed = snapshot is not self._snapshot
        if changed:  # the table changed: grade it again
            self.table, self._snapshot = result.table, snapshot
            self._scores = self.task.grader.components(snapshot)
        if result.view is not None:
            self._window = result.view
        if changed or result.view is not None:
            self._summary = table_summary(snapshot, self._window)
        self.done = op.ends_episode or len(self.history) >= self.spec.max_steps
        self.reward = self._grade()
        self.last_message = result.message
        if self.done and not op.ends_episode:
            self.last_message += " Step budget used up; episode finished."
        return self.result()

    def _grade(self) -> Reward:
        # model_construct: the values come from the grader, already of the right types, and
        # validating them again on every step costs more than the grading itself.
        reward = self.task.grader.combine(self._scores, self.history, self.spec.max_steps)
        return Reward.model_construct(**reward)

    # ── views ─────────────────────────────────────────────────────────────
    @property
    def snapshot(self) -> Snapshot:
        """The committed table, read out (the grader's and the observation's input)."""
        return self._snapshot

    @property
    def cells(self) -> int:
        return self._snapshot.n_rows * len(self._snapshot.columns)

    @property
    def step_count(self) -> int:
        return len(self.history)

    def observation(self, message: str | None = None) -> Observation:
        return Observation.model_construct(
            episode_id=self.episode_id,
            task_id=self.spec.task_id,
            step=self.step_count,
            steps_remaining=self.spec.max_steps - self.step_count,
            available_operations=self._operations,
            task_description=self.spec.description,
            message=self.last_message if message is None else message,
            **self._summary,
        )

    def info(self, error: EnvError | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {
            "episode_id": self.episode_id,
            "task_id": self.spec.task_id,
            "step": self.step_count,
            "max_steps": self.spec.max_steps,
            "last_action": (
                {"operation": self.history[-1].operation, "parameters": self.history[-1].parameters}
                if self.history
                else None
            ),
        }
        if error is not None:
            info["error"] = {"code": error.code, "detail": error.detail}
        return info

    def result(self, error: EnvError | None = None) -> StepResult:
        message = f"Error ({error.code}): {error.detail}" if error else None
        return StepResult.model_construct(
            observation=self.observation(message),
            reward=self.reward,
            done=self.done,
            info=self.info(error),
        )

    def state(self) -> EpisodeState:
        return EpisodeState(
            episode_id=self.episode_id,
            task_id=self.spec.task_id,
            seed=self.task.seed,
            split=self.task.split,
            step_count=self.step_count,
            max_steps=self.spec.max_steps,
            steps_remaining=self.spec.max_steps - self.step_count,
            done=self.done,
            shape=[len(self.table), len(self.table.columns)],
            reward=self.reward,
            history=[
                HistoryEntry(step=i + 1, operation=r.operation, parameters=r.parameters, message=m)
                for i, (r, m) in enumerate(zip(self.history, self.messages, strict=True))
            ],
        )


def _servable(result: OpResult) -> Snapshot:
    """The snapshot of a result that keeps the invariant every committed table keeps:
    unique text headers and no infinite numbers (so it always serialises)."""
    columns = list(result.table.columns)
    if len(set(columns)) != len(columns) or not all(isinstance(c, str) for c in columns):
        raise OperationFailed("the result would have duplicate or non-text column names")
    snapshot = result.snapshot or Snapshot.of(result.table)
    for column, kind in snapshot.kinds.items():
        if kind == "float" and any(
            v is not MISSING and math.isinf(v) for v in snapshot.values[column]
        ):
            raise OperationFailed(f"the result would hold infinite values in {column!r}")
    return snapshot
