"""One episode: a task's table, the accepted steps so far, and the step budget.

Every door (REST, in-process, later OpenEnv) ends in `Episode.step`, which runs the step as
one pure function and commits what it computed:

    next_step: resolve -> check -> apply -> snapshot -> profile -> grade -> observe
    Episode._commit: swap in the step's `Committed` state; keep it only if its result
    serialises, else swap the one before back

A step either commits a new table and history entry, or raises a typed error and leaves the
episode exactly as it was. Callers serialise steps on one episode with `episode.lock`.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from difflib import get_close_matches
from functools import partial
from typing import Any, NamedTuple, TypeVar

import pandas as pd

from dataclean_env.engine import views
from dataclean_env.engine.opening import opening_of
from dataclean_env.engine.step_memory import StepMemory, Transition
from dataclean_env.errors import (
    EnvError,
    EpisodeFinished,
    LabelBudgetExceeded,
    LabelsNotOffered,
    OperationFailed,
    OperationNotAllowed,
    ServerFault,
    UnknownOperation,
)
from dataclean_env.grading import ActionRecord
from dataclean_env.grading.gold_facts import key_text
from dataclean_env.grading.reward import FLOOR, reward_object
from dataclean_env.operations import OpContext, OpResult, resolve
from dataclean_env.operations.claims import LABEL_OPERATION
from dataclean_env.operations.registry import Operation, Params
from dataclean_env.schemas import (
    Action,
    EpisodeState,
    Observation,
    QueryResult,
    Reward,
    StepResult,
    built,
)
from dataclean_env.table.deferred import Table, frame_of
from dataclean_env.table.limits import (
    MAX_TABLE_CELLS,
    EngineLimits,
    TableBudget,
    check_parameters,
    default_limits,
)
from dataclean_env.table.observation import SAMPLE_ROWS, table_summary
from dataclean_env.table.profiles import column_profiles
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import Kind
from dataclean_env.tasks import Task
from dataclean_env.tasks.registry import TaskGrader

log = logging.getLogger(__name__)
T = TypeVar("T")
# Re-entrant: the server's event loop takes it, when it is free, around work that takes it.
EpisodeLock = threading.RLock


# Every optional field of the reward object is None by default (left out of its JSON).
_ABSENT_COMPONENTS = {
    name: None for name, field in Reward.model_fields.items() if not field.is_required()
}


class Committed(NamedTuple):
    """Everything a step may change, as of the last commit: one frozen value, swapped whole
    (history and messages only grow: a rollback cuts them back to their lengths)."""

    table: Table  # lazy operations may leave it deferred (see `Episode.table`)
    snapshot: Snapshot
    profiles: dict[str, dict[str, Any]]
    scores: dict[str, float]
    keyed: Any  # the table as the grader keyed it, or None
    budget: TableBudget
    history_bytes: int  # the parameters' JSON the history holds (limits.py)
    labelled: frozenset[str]  # the rows `label` revealed
    window: tuple[int, int]  # the rows observations sample; show_rows moves it
    query_result: QueryResult | None  # the last step's, if it was a query
    summary: dict[str, Any]  # `table_summary` at the window
    reward: Reward
    score: float  # the reward's total at full precision
    exact: bool  # the table equals gold with no penalty
    done: bool
    # Why the episode ended: "finished" (terminated by the agent), "step_budget" or
    # "refusal_budget" (truncated); None while it runs.
    end_reason: str | None
    last_message: str


class Episode:
    # Whether a step may wait on I/O besides the engine's work (a leaderboard episode records
    # its end in the step that ends it): the server then runs its steps off the event loop.
    step_waits = False

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
        self.history: list[ActionRecord] = []
        self.messages: list[str] = []
        self.refusals = 0  # refused actions so far
        self.lock = EpisodeLock()
        # Odd while a step's commit or refusal is changing the episode (`read_committed`).
        self._changes = 0
        self.last_used = 0.0  # set by the store that holds the episode
        self.blind = False  # reward_mode="hidden": the doors hide the score until done
        # Rows `label` may reveal (a leaderboard episode offers none).
        self.label_budget = self.spec.label_budget
        # The rows already revealed to this client on this instance, shared by its episodes
        # (the store's `label_ledger`), so a reset does not refill the budget; None: this
        # episode's own.
        self.label_ledger: set[str] | None = None
        # Aliases (fill_missing_mean, ...) are accepted, not advertised: an observation lists
        # what /tasks and the page do.
        self.operations = list(self.spec.operations)
        self._allowed = frozenset(self.spec.operations)
        opening = opening_of(task)
        # Steps from a small table are shared, through the step memory the episode's maker
        # gives (None: every step is computed), with the other episodes that take them; a
        # large table would hold too much memory.
        small = opening.snapshot.n_rows * len(opening.snapshot.columns) <= MAX_TABLE_CELLS
        self._memory = memory if small else None
        self.limits = limits or default_limits()
        shared = opening.budget.limits == self.limits  # then steps share their budgets too
        budget = opening.budget if shared else TableBudget(self.limits, opening.snapshot)
        # The table starts as the task's own, shared with the task's other episodes: no
        # operation changes the table it is given, a step replaces it.
        self.committed = Committed(
            task.dirty, opening.snapshot, opening.profiles, opening.scores, opening.keyed,
            budget, 0, frozenset(), (0, SAMPLE_ROWS), None, opening.summary,
            *_reward(task.grader, opening.scores, self.history, self.spec.max_steps),
            False, None, "Episode started. " + self.spec.description,
        )  # fmt: skip

    # ── stepping ──────────────────────────────────────────────────────────

    def seconds_left(self) -> float | None:
        """Seconds until its deadline ends it (None: it has none; it ends by idling)."""
        return None

    def step(self, action: Action) -> StepResult:
        """Apply one action; raises EnvError (and changes nothing else) if it is refused.

        A refused action counts against the refusal allowance (as many as the step budget):
        when that is used up the episode ends, truncated, so no episode lasts forever."""
        if self.done:
            raise EpisodeFinished(
                f"episode {self.episode_id!r} is finished; reset to start a new one"
            )
        try:
            step = next_step(self, action)
        except ServerFault:
            raise
        except EnvError:
            with self._changing():
                self.refusals += 1
                if self.refusals >= self.spec.max_steps:
                    self.committed = self.committed._replace(
                        done=True,
                        end_reason="refusal_budget",
                        last_message="Too many refused actions; episode finished.",
                    )
            raise
        with self._changing():
            return self._commit(step)

    def refusal(self, action: Action) -> EnvError | None:
        """The refusal `action` would get now, without taking it (None: it would be taken).
        Nothing changes, not even the refusal count: the page's helper asks before it
        offers an action. With a step memory, a step it computes is remembered, so taking it
        then costs nothing more."""
        if self.done:
            return EpisodeFinished(f"episode {self.episode_id!r} is finished")
        try:
            next_step(self, action)
        except ServerFault:
            raise
        except EnvError as exc:
            return exc
        return None

    # ── the commit: all or nothing ─────────────────────────────────────────
    def _commit(self, step: Step) -> StepResult:
        """Swap in the state `next_step` computed; a step commits only if its result can be
        served (the answer every door sends must serialise: it is written now, and kept)."""
        before = self.committed
        self.history.append(step.record)
        self.messages.append(step.message)
        self.committed = step.committed
        try:
            served = self.result()
            served.json_bytes()
        except Exception as exc:
            self.committed = before
            del self.history[-1], self.messages[-1]
            if isinstance(exc, EnvError):
                raise
            log.exception(
                "step %s failed after the operation ran; rolled back", step.record.operation
            )
            raise ServerFault(
                f"{step.record.operation} could not be applied; nothing changed"
            ) from exc
        if self.label_ledger is not None:
            self.label_ledger.update(self.labelled)
        return served

    def share_labels(self, ledger: set[str]) -> None:
        """Count labels in `ledger`, the rows this client was shown on this instance before
        (a fresh episode: before its first step)."""
        self.label_ledger = ledger
        self.committed = self.committed._replace(labelled=frozenset(ledger))

    @contextmanager
    def _changing(self) -> Iterator[None]:
        self._changes += 1
        try:
            yield
        finally:
            self._changes += 1

    # ── views ─────────────────────────────────────────────────────────────
    @property
    def table(self) -> pd.DataFrame:
        """The committed table as a DataFrame, built now if a lazy step deferred it."""
        return frame_of(self.committed.table)

    @property
    def snapshot(self) -> Snapshot:
        """The committed table, read out (the grader's and the observation's input)."""
        return self.committed.snapshot

    @property
    def cells(self) -> int:
        snapshot = self.committed.snapshot
        return snapshot.n_rows * len(snapshot.columns)

    @property
    def reward(self) -> Reward:
        return self.committed.reward

    @property
    def score(self) -> float:
        return self.committed.score

    @property
    def exact(self) -> bool:
        return self.committed.exact

    @property
    def labelled(self) -> frozenset[str]:
        return self.committed.labelled

    @property
    def end_reason(self) -> str | None:
        return self.committed.end_reason

    @property
    def done(self) -> bool:
        return self.committed.done

    @done.setter
    def done(self, done: bool) -> None:  # a leaderboard episode ends on its own clock
        self.committed = self.committed._replace(done=done)

    @property
    def last_message(self) -> str:
        return self.committed.last_message

    @last_message.setter
    def last_message(self, message: str) -> None:
        self.committed = self.committed._replace(last_message=message)

    @property
    def step_count(self) -> int:
        return len(self.history)

    def observation(self, message: str | None = None) -> Observation:
        return views.observation(self, message)

    def info(self, error: EnvError | None = None) -> dict[str, Any]:
        return views.info(self, error)

    def repair(self) -> dict[str, float] | None:
        return views.repair(self)

    def result(self, error: EnvError | None = None) -> StepResult:
        return views.result(self, error)

    def read_committed(self, read: Callable[[], T]) -> T:
        """`read()` of the episode as last committed, without the lock, for a caller that
        may not wait for a step in progress (OpenEnv reads a /ws session's state on the event
        loop). A step changes nothing until it commits, which takes moments: a read that a
        commit overlapped is read again."""
        while True:
            before = self._changes
            if before % 2 == 0:
                try:
                    value = read()
                except Exception:
                    if self._changes == before:
                        raise
                else:
                    if self._changes == before:
                        return value
            time.sleep(0)  # gives the committing thread the interpreter

    def state(self) -> EpisodeState:
        return views.state(self)


# ── the step, as one pure function ─────────────────────────────────────────
class Step(NamedTuple):
    """What one action does to an episode, computed by `next_step` and not yet committed."""

    record: ActionRecord  # appended to the history
    message: str  # the operation's, appended to the messages
    committed: Committed  # the episode's state after it, swapped in whole


class _Checked(NamedTuple):
    """An action resolved and allowed, its parameters within the limits."""

    op: Operation
    params: Params  # validated
    record: ActionRecord
    text: str  # the parameters as JSON
    size: int
    labelled: frozenset[str]
    history: tuple[str, ...]  # the operations before it


def next_step(episode: Episode, action: Action) -> Step:
    """What `action` does to `episode`, computed and not committed: resolve -> check ->
    apply -> snapshot -> profile -> grade -> observe. It changes nothing it is given (the
    step memory, a cache, may remember the step; a deferred table may get built); it raises
    EnvError if the action is refused."""
    try:
        op, params = resolve(action.operation, action.parameters)
    except UnknownOperation:
        name = action.operation
        raise _refused(UnknownOperation, episode, name, f"unknown operation {name!r}") from None
    checked = _check(episode, op, params)
    change = _table_step(episode, checked)  # apply -> snapshot -> profile -> grade the table
    budget = _admitted(episode, change)  # the table within this episode's own limits
    try:
        history = [*episode.history, checked.record]
        graded = _reward(episode.task.grader, change.scores, history, episode.spec.max_steps)
        return _observe(episode, checked, change, budget, graded)
    except EnvError:
        raise
    except Exception as exc:
        raise _fault(op) from exc


def _refused(kind: type[EnvError], episode: Episode, name: str, what: str) -> EnvError:
    """`kind` refusing `name` (`what` says how), with the task's operations (`allowed`) and
    the one nearest to it (`did_you_mean`, or None), in the detail and as fields beside the
    code."""
    allowed = episode.operations
    nearest = next(iter(get_close_matches(name, allowed, n=1)), None)
    hint = f" (did you mean {nearest!r}?)" if nearest else ""
    detail = f"{what}{hint}; this task's operations: {', '.join(allowed)}"
    return kind(detail, allowed=list(allowed), did_you_mean=nearest)


def _check(episode: Episode, op: Operation, params: Params) -> _Checked:
    """The action checked: refused (a typed EnvError) if `op` is not the task's, if it
    labels more rows than the budget allows, or if its parameters are not within the
    limits."""
    spec = episode.spec
    if op.name not in spec.operations:
        raise _refused(
            OperationNotAllowed,
            episode,
            op.name,
            f"operation {op.name!r} is not available in task {spec.task_id!r}",
        )
    labelled = _labelled_after(episode, params) if op.name == LABEL_OPERATION else episode.labelled
    parameters = params.model_dump(exclude_none=True)
    text, size = check_parameters(
        parameters,
        episode.limits,
        episode.committed.history_bytes,
        episode.committed.budget.max_history,
    )
    record = ActionRecord(op.name, parameters, op.rank, op.repeatable)
    history = tuple(r.operation for r in episode.history)
    return _Checked(op, params, record, text, size, labelled, history)


def _table_step(episode: Episode, checked: _Checked) -> Transition:
    """The table the step gives, read out, profiled and graded: computed, or the step the
    memory holds (another episode took it from this very table)."""
    compute = partial(_computed, episode, checked)
    if episode._memory is None:
        return compute()
    record = checked.record
    history = checked.history if episode.spec.phases else ()  # the only ones that read it
    return episode._memory.lookup(
        episode.task, episode.committed.snapshot, record.operation, record.parameters, checked.text,
        history, compute,
    )  # fmt: skip


def _computed(episode: Episode, checked: _Checked) -> Transition:
    """apply -> snapshot -> profile -> grade: the operation applied to the committed table,
    and the table it gives read out, admitted (TooLarge), profiled and graded."""
    op, before = checked.op, episode.committed.snapshot
    given, result = _apply(episode, checked)
    task = weakref.ref(episode.task)
    # An operation that hands back the table it was given changed nothing (`episode.table`
    # may have just built a deferred table: compare with what the operation got).
    if result.output is given:
        unchanged = (
            before,
            episode.committed.profiles,
            episode.committed.scores,
            episode.committed.keyed,
        )
        return Transition(
            task, before, result, *unchanged, episode.committed.budget, episode.committed.budget
        )
    after = _servable(result)
    budget = episode.committed.budget.admit(after)
    try:
        profiles = column_profiles(after, (before, episode.committed.profiles))
        scores, keyed = episode.task.grader.graded(after, episode.committed.keyed)
    except Exception as exc:
        raise _fault(op) from exc
    return Transition(
        task, before, result, after, profiles, scores, keyed, episode.committed.budget, budget
    )


def _apply(episode: Episode, checked: _Checked) -> tuple[Table, OpResult]:
    """The table the operation is given, and its result."""
    op, spec = checked.op, episode.spec
    labels = op.name == LABEL_OPERATION and episode.label_budget > 0
    context = OpContext(
        spec.target_schema,
        episode.committed.snapshot,
        protected_columns=spec.protected_columns,
        allowed_operations=episode._allowed,
        history=checked.history,
        deadline=episode.limits.deadline(),
        max_text_chars=episode.committed.budget.max_table,
        clean_rows=episode.task.grader.clean_rows if labels else None,
    )
    try:
        # A lazy operation reads the snapshot only: it gets the table as it is, unbuilt.
        given = episode.committed.table if op.lazy else episode.table
        return given, op.apply(given, checked.params, context)
    except EnvError:
        raise
    except Exception as exc:  # a pandas corner we did not foresee: refuse, never 500
        log.exception("operation %s failed unexpectedly", op.name)
        raise ServerFault(f"{op.name} could not be applied: {exc}") from exc


def _admitted(episode: Episode, change: Transition) -> TableBudget:
    """The step's table under the episode's own limits (TooLarge if it is not within them)."""
    if change.budget_before is episode.committed.budget:  # this budget admitted the table before
        budget: TableBudget = change.budget_after
        return budget
    return episode.committed.budget.admit(change.after)  # a step another episode took, other limits


def _reward(
    grader: TaskGrader, scores: dict[str, float], history: list[ActionRecord], max_steps: int
) -> tuple[Reward, float, bool]:
    """The reward object (4 places, as the contract says), its total at full precision (so
    a small fix on a large table still changes it), and whether the table equals gold with
    no penalty."""
    reward = grader.combine(scores, history, max_steps)
    exact = reward["penalty"] <= FLOOR and all(v >= 1.0 for v in scores.values())
    # Built, not validated: the values come from the grader, already of the right types,
    # and validating them again on every step costs more than the grading itself. Every
    # field is passed (absent components as None, their default) so that no default
    # need be looked up; the fields set stay the grader's.
    values = reward_object(reward)
    return built(Reward, {**_ABSENT_COMPONENTS, **values}, set(values)), reward["total"], exact


def _observe(
    episode: Episode,
    checked: _Checked,
    change: Transition,
    budget: TableBudget,
    graded: tuple[Reward, float, bool],
) -> Step:
    """The step with what the agent observes after it: the table's summary at the rows
    shown, the message, and whether the episode ended."""
    op, result = checked.op, change.result
    before = episode.committed
    changed = change.after is not change.before
    window = before.window if result.window is None else result.window
    summary = before.summary
    if changed or result.window is not None:
        summary = table_summary(change.after, window)
    end_reason = None
    if op.ends_episode:
        end_reason = "finished"
    elif len(episode.history) + 1 >= episode.spec.max_steps:
        end_reason = "step_budget"
    message = result.message
    if end_reason == "step_budget":
        message += " Step budget used up; episode finished."
    after = Committed(
        result.output if changed else before.table, change.after, change.profiles,
        change.scores, change.keyed, budget, before.history_bytes + checked.size,
        checked.labelled, window, result.query_result, summary, *graded,
        end_reason is not None, end_reason, message,
    )  # fmt: skip
    return Step(checked.record, result.message, after)


def _labelled_after(episode: Episode, params: Any) -> frozenset[str]:
    """The rows labelled once this `label` step is taken, or the refusal: no labels on
    this episode, or more rows than the budget has left (a row labelled before is free)."""
    grader = episode.task.grader
    if episode.label_budget <= 0 or not grader.offers_labels:
        raise LabelsNotOffered(f"episode {episode.episode_id!r} offers no labels (label budget 0)")
    labelled = episode.labelled | {str(key_text(k)) for k in params.row_ids}
    if len(labelled) > episode.label_budget:
        raise LabelBudgetExceeded(
            f"labelling these rows would use {len(labelled)} labels; the budget is "
            f"{episode.label_budget} and {len(episode.labelled)} are used"
        )
    return labelled


def _fault(op: Operation) -> ServerFault:
    """A failure after the operation ran: the server's fault, and nothing changed."""
    log.exception("step %s failed after the operation ran", op.name)
    return ServerFault(f"{op.name} could not be applied; nothing changed")


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
