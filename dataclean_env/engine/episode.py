"""One episode: a task's table, the accepted steps so far, and the step budget.

Every door (REST, in-process, later OpenEnv) ends in `Episode.step`. A step either commits
a new table and history entry, or raises a typed error and leaves the episode exactly as it
was. Callers serialise steps on one episode with `episode.lock`.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import weakref
from dataclasses import dataclass
from typing import Any, NamedTuple

import pandas as pd

from dataclean_env.engine.deferred import Table, frame_of
from dataclean_env.engine.limits import EngineLimits, TableBudget, check_parameters, default_limits
from dataclean_env.engine.observation import SAMPLE_ROWS, table_summary
from dataclean_env.engine.profiles import column_profiles
from dataclean_env.engine.snapshot import Snapshot
from dataclean_env.engine.step_memory import MAX_TABLE_CELLS, Key, StepMemory, Transition
from dataclean_env.engine.values import Kind
from dataclean_env.errors import (
    EnvError,
    EpisodeFinished,
    LabelBudgetExceeded,
    LabelsNotOffered,
    OperationFailed,
    OperationNotAllowed,
    ServerFault,
)
from dataclean_env.grading import ActionRecord
from dataclean_env.grading.gold_facts import key_text
from dataclean_env.grading.reward import FLOOR, reward_object
from dataclean_env.operations import OpContext, OpResult, alias_names, canonical_name, resolve
from dataclean_env.operations.claims import LABEL_OPERATION, phase_view
from dataclean_env.schemas import (
    Action,
    EpisodeState,
    HistoryEntry,
    Observation,
    QueryResult,
    Reward,
    StepResult,
    built,
)
from dataclean_env.tasks import Task

log = logging.getLogger(__name__)


# Every optional field of the reward object is None by default (left out of its JSON).
_ABSENT_COMPONENTS = {
    name: None for name, field in Reward.model_fields.items() if not field.is_required()
}


def available_operations(allowed: tuple[str, ...]) -> list[str]:
    """The task's operations followed by the aliases of those operations."""
    aliases = [a for a in alias_names() if canonical_name(a) in allowed]
    return list(allowed) + aliases


class _Planned(NamedTuple):
    """An action resolved, checked and computed, not yet committed (see `Episode._plan`)."""

    op: Any
    parameters: dict[str, Any]
    labelled: frozenset[str]
    size: int  # the parameters' bytes, counted against the history's limit
    memory_key: Key | None  # where the step memory keeps the step, if it should
    step: Transition
    budget: Any


class Episode:
    def __init__(
        self,
        episode_id: str,
        task: Task,
        limits: EngineLimits | None = None,
        memory: StepMemory | None = None,
    ):
        self.episode_id = episode_id
        self.task = task
        self.spec = task.spec
        # The committed table; lazy operations may leave it deferred (see `table`). It starts
        # as the task's own table, shared with the task's other episodes: no operation
        # changes the table it is given, a step replaces it.
        self._table: Table = task.dirty
        self.history: list[ActionRecord] = []
        self._history_bytes = 0  # the parameters' JSON the history holds (limits.py)
        self.messages: list[str] = []
        self.done = False
        # Why the episode ended: "finished" (terminated by the agent), "step_budget" or
        # "refusal_budget" (truncated); None while it runs.
        self.end_reason: str | None = None
        self.refusals = 0  # refused actions so far
        self.score = 0.0  # the reward total at full precision (set by _grade)
        self.exact = False  # the table equals gold and no penalty applies
        self.lock = threading.Lock()
        self.last_used = 0.0  # set by the store that holds the episode
        self.blind = False  # reward_mode="hidden": the doors hide the score until done
        # Rows `label` may reveal (a leaderboard episode offers none) and the rows revealed.
        self.label_budget = self.spec.label_budget
        self.labelled: frozenset[str] = frozenset()
        self._operations = available_operations(self.spec.operations)
        self._allowed = frozenset(self.spec.operations)
        opening = opening_of(task)
        self._snapshot = opening.snapshot
        # Steps from a small table are shared, through the step memory the episode's maker
        # gives (None: every step is computed), with the other episodes that take them; a
        # large table would hold too much memory.
        self._memory = memory
        small = opening.snapshot.n_rows * len(opening.snapshot.columns) <= MAX_TABLE_CELLS
        self._shares = memory is not None and small
        self._window = (0, SAMPLE_ROWS)  # the rows observations sample; show_rows moves it
        self._query_result: QueryResult | None = None  # the last step's, if it was a query
        self._summary = opening.summary
        self._profiles = opening.profiles
        self._view: Any = opening.view  # what the grader indexed of the table
        self._scores = opening.scores
        self.reward = self._grade()
        self.last_message = "Episode started. " + self.spec.description
        self.limits = limits or default_limits()
        shared = opening.budget.limits == self.limits  # then steps share their budgets too
        self._budget = opening.budget if shared else TableBudget(self.limits, self._snapshot)

    # ── stepping ──────────────────────────────────────────────────────────
    def step(self, action: Action) -> StepResult:
        """Apply one action; raises EnvError (and changes nothing else) if it is refused.

        A refused action counts against the refusal allowance (as many as the step budget):
        when that is used up the episode ends, truncated, so no episode lasts forever."""
        if self.done:
            raise EpisodeFinished(
                f"episode {self.episode_id!r} is finished; reset to start a new one"
            )
        try:
            return self._apply(action)
        except ServerFault:
            raise
        except EnvError:
            self.refusals += 1
            if self.refusals >= self.spec.max_steps:
                self.done, self.end_reason = True, "refusal_budget"
                self.last_message = "Too many refused actions; episode finished."
            raise

    def refusal(self, action: Action) -> EnvError | None:
        """The refusal `action` would get now, without taking it (None: it would be taken).
        Nothing changes, not even the refusal count: the page's helper asks before it
        offers an action. With a step memory, a step it computes is remembered, so taking it
        then costs nothing more."""
        if self.done:
            return EpisodeFinished(f"episode {self.episode_id!r} is finished")
        try:
            planned = self._plan(action)
        except ServerFault:
            raise
        except EnvError as exc:
            return exc
        self._remember(planned)
        return None

    def _apply(self, action: Action) -> StepResult:
        planned = self._plan(action)
        op, step = planned.op, planned.step
        # ── commit, all or nothing: a step commits only if its result can be served ──
        saved = self._committed()
        try:
            self.labelled = planned.labelled
            served = self._commit(op, planned.parameters, step)
            served.json_bytes()  # the answer every door sends must be serialisable (kept)
        except Exception as exc:
            self._restore(saved)
            if isinstance(exc, EnvError):
                raise
            log.exception("step %s failed after the operation ran; rolled back", op.name)
            raise ServerFault(f"{op.name} could not be applied; nothing changed") from exc
        self._remember(planned)
        self._budget = planned.budget
        self._history_bytes += planned.size
        return served

    def _plan(self, action: Action) -> _Planned:
        """Resolve and check the action and compute its step (or take it from the step
        memory), changing nothing; raises EnvError if the action is refused."""
        op, params = resolve(action.operation, action.parameters)
        if op.name not in self.spec.operations:
            raise OperationNotAllowed(
                f"operation {op.name!r} is not available in task {self.spec.task_id!r}; "
                f"available: {', '.join(self._operations)}"
            )
        labelled = self._labelled_after(params) if op.name == LABEL_OPERATION else self.labelled
        parameters = params.model_dump(exclude_none=True)
        history = tuple(record.operation for record in self.history)
        text, size = check_parameters(parameters, self.limits, self._history_bytes)
        # Only phased tasks' operations read the history. Parameters that JSON would not
        # give back as they are (a tuple, a number as a key: in-process callers only) are
        # not the parameters another episode's same text stood for.
        key = (id(self._snapshot), op.name, text, history if self.spec.phases else ())
        shared = self._shares and json.loads(text) == parameters
        memory = self._memory if shared else None
        known = None if memory is None else memory.get(self.task, self._snapshot, key)
        step = known if known is not None else self._transition(op, params, history)
        if step.budget_before is self._budget:  # this budget admitted the table before
            budget = step.budget_after
        else:  # a step another episode took, under other limits
            budget = self._budget.admit(step.after)
        remember = memory is not None and known is None and step.after is not step.before
        return _Planned(op, parameters, labelled, size, key if remember else None, step, budget)

    def _remember(self, planned: _Planned) -> None:
        if planned.memory_key is not None and self._memory is not None:
            self._memory.remember(planned.memory_key, planned.step)

    def _transition(self, op: Any, params: Any, history: tuple[str, ...]) -> Transition:
        """Apply the operation to the committed table, and read out, admit (TooLarge),
        profile and grade the table it gives; the episode itself is left as it is."""
        before = self._snapshot
        context = OpContext(
            self.spec.target_schema,
            before,
            protected_columns=self.spec.protected_columns,
            allowed_operations=self._allowed,
            history=history,
            deadline=self.limits.deadline(),
            clean_rows=self._clean_rows() if op.name == LABEL_OPERATION else None,
        )
        try:
            # A lazy operation reads the snapshot only: it gets the table as it is, unbuilt.
            given = self._table if op.lazy else self.table
            result = op.apply(given, params, context)
        except EnvError:
            raise
        except Exception as exc:  # a pandas corner we did not foresee: refuse, never 500
            log.exception("operation %s failed unexpectedly", op.name)
            raise ServerFault(f"{op.name} could not be applied: {exc}") from exc
        # An operation that hands back the table it was given changed nothing (`self.table`
        # may have just built a deferred `_table`: compare with what the operation got).
        if result.output is given:
            unchanged = (before, self._profiles, self._scores, self._view)
            task = weakref.ref(self.task)
            return Transition(task, before, result, *unchanged, self._budget, self._budget)
        after = _servable(result)
        budget = self._budget.admit(after)
        try:
            profiles = column_profiles(after, (before, self._profiles))
            scores, view = _graded(self.task, after, self._view)
        except Exception as exc:
            log.exception("step %s failed after the operation ran", op.name)
            raise ServerFault(f"{op.name} could not be applied; nothing changed") from exc
        return Transition(
            weakref.ref(self.task),
            before,
            result,
            after,
            profiles,
            scores,
            view,
            self._budget,
            budget,
        )

    def _labelled_after(self, params: Any) -> frozenset[str]:
        """The rows labelled once this `label` step is taken, or the refusal: no labels on
        this episode, or more rows than the budget has left (a row labelled before is free)."""
        if self.label_budget <= 0 or getattr(self.task.grader, "clean_rows", None) is None:
            raise LabelsNotOffered(f"episode {self.episode_id!r} offers no labels (label budget 0)")
        labelled = self.labelled | {str(key_text(k)) for k in params.row_ids}
        if len(labelled) > self.label_budget:
            raise LabelBudgetExceeded(
                f"labelling these rows would use {len(labelled)} labels; the budget is "
                f"{self.label_budget} and {len(self.labelled)} are used"
            )
        return labelled

    def _clean_rows(self) -> Any:
        return getattr(self.task.grader, "clean_rows", None) if self.label_budget > 0 else None

    # ── the commit: all or nothing (see step) ──────────────────────────────
    def _commit(self, op: Any, parameters: dict[str, Any], step: Transition) -> StepResult:
        result = step.result
        record = ActionRecord(op.name, parameters, op.rank, op.repeatable)
        self.history.append(record)
        self.messages.append(result.message)
        changed = step.after is not self._snapshot
        if changed:  # the table changed: its profiles and grading come with the step
            self._table, self._snapshot = result.output, step.after
            self._profiles, self._scores, self._view = step.profiles, step.scores, step.view
        if result.view is not None:
            self._window = result.view
        self._query_result = result.query_result
        if changed or result.view is not None:
            self._summary = table_summary(step.after, self._window)
        if op.ends_episode:
            self.done, self.end_reason = True, "finished"
        elif len(self.history) >= self.spec.max_steps:
            self.done, self.end_reason = True, "step_budget"
        self.reward = self._grade()
        self.last_message = result.message
        if self.end_reason == "step_budget":
            self.last_message += " Step budget used up; episode finished."
        return self.result()

    # Everything a step may change (history and messages only grow: their lengths suffice).
    _COMMITTED = (
        "_table", "_snapshot", "_scores", "_window", "_summary", "done", "reward",
        "last_message", "end_reason", "score", "exact", "_profiles", "_view", "labelled",
        "_query_result",
    )  # fmt: skip

    def _committed(self) -> tuple[Any, ...]:
        state = tuple(getattr(self, name) for name in self._COMMITTED)
        return state, len(self.history), len(self.messages)

    def _restore(self, saved: tuple[Any, ...]) -> None:
        state, n_history, n_messages = saved
        for name, value in zip(self._COMMITTED, state, strict=True):
            setattr(self, name, value)
        del self.history[n_history:], self.messages[n_messages:]

    def _grade(self) -> Reward:
        """The reward object (4 places, as the contract says); `score` keeps full precision,
        so a small fix on a large table still changes it."""
        reward = self.task.grader.combine(self._scores, self.history, self.spec.max_steps)
        self.score = reward["total"]
        self.exact = reward["penalty"] <= FLOOR and all(v >= 1.0 for v in self._scores.values())
        # Built, not validated: the values come from the grader, already of the right types,
        # and validating them again on every step costs more than the grading itself. Every
        # field is passed (absent components as None, their default) so that no default
        # need be looked up; the fields set stay the grader's.
        values = reward_object(reward)
        return built(Reward, {**_ABSENT_COMPONENTS, **values}, set(values))

    # ── views ─────────────────────────────────────────────────────────────
    @property
    def table(self) -> pd.DataFrame:
        """The committed table as a DataFrame, built now if a lazy step deferred it."""
        return frame_of(self._table)

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
        """The observation after the last step; with `message` (a refusal's), that of a
        step that ran no query."""
        return built(
            Observation,
            {
                "episode_id": self.episode_id,
                "task_id": self.spec.task_id,
                "step": self.step_count,
                "steps_remaining": self.spec.max_steps - self.step_count,
                "available_operations": self._operations,
                "task_description": self.spec.description,
                "message": self.last_message if message is None else message,
                **self._phase(),
                "column_profiles": self._profiles,
                "query_result": self._query_result if message is None else None,
                **self._summary,
            },
        )

    def _phase(self) -> dict[str, Any]:
        if not self.spec.phases:
            return {}
        phase, left = phase_view(self.spec.phases, [r.operation for r in self.history])
        return {"phase": phase, "phases_left": left}

    def info(self, error: EnvError | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {
            "episode_id": self.episode_id,
            "task_id": self.spec.task_id,
            "step": self.step_count,
            "max_steps": self.spec.max_steps,
            "score": self.score,
            "exact": self.exact,
            "terminated": self.end_reason == "finished",
            "truncated": self.end_reason in ("step_budget", "refusal_budget"),
            "end_reason": self.end_reason,
            "refusals": self.refusals,
            "last_action": (
                {"operation": self.history[-1].operation, "parameters": self.history[-1].parameters}
                if self.history
                else None
            ),
        }
        repair = self.repair()
        if repair is not None:
            info["repair"] = repair
        if self.spec.label_budget:
            info["labels_used"] = len(self.labelled)
        if error is not None:
            info["error"] = {"code": error.code, "detail": error.detail}
        return info

    def repair(self) -> dict[str, float] | None:
        """Real tables: the exact cell-repair precision, recall, F1 and cells changed."""
        report = getattr(self.task.grader, "repair_report", None)
        return None if report is None else report(self._scores)

    def result(self, error: EnvError | None = None) -> StepResult:
        message = f"Error ({error.code}): {error.detail}" if error else None
        return built(
            StepResult,
            {
                "observation": self.observation(message),
                "reward": self.reward,
                "done": self.done,
                "info": self.info(error),
            },
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
            shape=[self._snapshot.n_rows, len(self._snapshot.columns)],
            reward=self.reward,
            history=[
                HistoryEntry(step=i + 1, operation=r.operation, parameters=r.parameters, message=m)
                for i, (r, m) in enumerate(zip(self.history, self.messages, strict=True))
            ],
            repair=self.repair(),
        )


@dataclass(frozen=True)
class Opening:
    """What an episode starts from, derived from its task's dirty table alone: the same for
    every episode of one task instance. Shared, so never changed (a step replaces these
    objects, it does not edit them)."""

    snapshot: Snapshot
    summary: dict[str, Any]  # `table_summary` at the first rows
    profiles: dict[str, dict[str, Any]]
    view: Any  # what the grader indexed of the table, or None
    scores: dict[str, float]
    budget: TableBudget  # under the default limits


def opening_of(task: Task) -> Opening:
    """The task's opening, computed on its first episode (two threads racing for it compute
    the same thing twice, harmlessly)."""
    opening = task.derived.get("opening")
    if opening is None:
        snapshot = Snapshot.of(task.dirty)
        scores, view = _graded(task, snapshot, None)
        summary, profiles = table_summary(snapshot), column_profiles(snapshot)
        budget = TableBudget(default_limits(), snapshot)
        opening = Opening(snapshot, summary, profiles, view, scores, budget)
        task.derived["opening"] = opening
    return opening


def _graded(task: Task, snapshot: Snapshot, previous: Any) -> tuple[dict[str, float], Any]:
    """The grader's scores and the view it read them from (None for a grader without one);
    a grader that can reuse what it indexed of the table before (`Grader.graded`) gets it."""
    graded = getattr(task.grader, "graded", None)
    if graded is None:
        return task.grader.components(snapshot), None
    scores_and_view: tuple[dict[str, float], Any] = graded(snapshot, previous)
    return scores_and_view


def _servable(result: OpResult) -> Snapshot:
    """The snapshot of a result that keeps the invariant every committed table keeps:
    unique text headers and no infinite numbers (so it always serialises)."""
    snapshot = result.snapshot or Snapshot.of(result.table)
    columns = snapshot.columns  # the table's own, whether it is built yet or not
    if len(set(columns)) != len(columns) or not all(isinstance(c, str) for c in columns):
        raise OperationFailed("the result would have duplicate or non-text column names")
    for column, kind in snapshot.kinds.items():
        # `in` compares in C: only an infinite float equals inf (MISSING equals nothing).
        if kind == Kind.FLOAT and (
            math.inf in snapshot.values[column] or -math.inf in snapshot.values[column]
        ):
            raise OperationFailed(f"the result would hold infinite values in {column!r}")
    return snapshot
