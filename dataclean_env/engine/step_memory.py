"""The step memory: steps already taken from a table, for the episodes that take them again.

The episodes of one task instance start from one shared opening (`episode.opening_of`), and
an operation's result depends only on the table it is applied to, its parameters, the task
and (on phased tasks) the operations before it. So when an episode applies an action another
episode already applied to the very same committed table (the rollouts of a GRPO group, an
agent replayed, a benchmark's repeated plan), it takes that step's result instead of
computing it again: the new table and its snapshot, profiles and grading. The answer is the
same bytes either way (`tests/unit/engine/test_step_memory.py`): an operation never changes the
table it is given, and a step replaces an episode's table rather than editing it, so tables
and snapshots are values that episodes can share.

A memory belongs to whoever creates the episodes and hands it to each (`Episode(...,
memory=...)`): the server's episode store makes one from its settings, the training
environment one for all its rollouts; an episode without one computes every step.

Keys hold the table's snapshot object itself (not a copy of its contents): looking a step
up costs a dict lookup, and a snapshot is only ever reached by taking the same steps from
the same opening. An episode asks once per step (`lookup`: the step remembered, or else
computed and remembered); only steps that changed a small opening's table are remembered
(an episode of a large one is given no memory), and the memory is bounded by an estimate
of the bytes its entries hold (their tables' cells and text, their parameters' text) and
by entries, least recently used out first.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

from dataclean_env.operations import OpResult
from dataclean_env.table.snapshot import Snapshot

MAX_BYTES = 128 * 2**20  # all entries together, as `weight` estimates them
MAX_ENTRIES = 16_384
# What `weight` charges: an entry's own objects (key, result, a DataFrame's overhead), each
# cell of its tables (a list slot and a share of the values), each character of their text
# and of the parameters (CPython stores up to 4 bytes per character).
ENTRY_BYTES, CELL_BYTES, CHAR_BYTES = 4_096, 16, 4

# (id of the snapshot before, operation, parameters as JSON, operations before it on a
# phased task, else ())
Key = tuple[int, str, str, tuple[str, ...]]


class Transition(NamedTuple):  # a tuple: made on every step, and cheaper than a dataclass
    # A weak reference to the Task whose episode took the step (its grader graded `after`):
    # the memory does not keep a task, its table and its opening alive.
    task: weakref.ref[Any]
    before: Snapshot  # held, so that its id in the key names no other snapshot
    result: OpResult
    after: Snapshot  # `before` itself when the operation changed nothing
    profiles: dict[str, dict[str, Any]]  # of `after`
    scores: dict[str, float]
    keyed: Any  # `after` as the grader keyed it
    budget_before: Any  # the TableBudget that admitted `after`, and the one that gave
    budget_after: Any


def _cells(snapshot: Snapshot) -> int:
    return snapshot.n_rows * len(snapshot.columns)


def weight(key: Key, step: Transition) -> int:
    """The bytes an entry may keep alive, estimated from its tables before and after (their
    budgets count their text) and its parameters: at least ENTRY_BYTES, however empty."""
    cells = _cells(step.before) + _cells(step.after)
    chars = step.budget_before.total + step.budget_after.total + len(key[2])
    return int(ENTRY_BYTES + CELL_BYTES * cells + CHAR_BYTES * chars)


class StepMemory:
    def __init__(self, max_weight: int = MAX_BYTES, max_entries: int = MAX_ENTRIES):
        self.max_weight, self.max_entries = max_weight, max_entries
        self._entries: OrderedDict[Key, tuple[Transition, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def weight(self) -> int:
        return self._weight

    def lookup(
        self,
        task: Any,
        before: Snapshot,
        operation: str,
        parameters: dict[str, Any],
        text: str,
        history: tuple[str, ...],
        compute: Callable[[], Transition],
    ) -> Transition:
        """The step `operation` with `parameters` (`text` is their JSON) takes from the table
        `before`, after the operations `history` (on a phased task, else ()): the one an
        episode of `task` took, or else `compute()`'s, remembered if it changed the table.
        Parameters JSON would not give back as they are (a tuple, a number as a key:
        in-process callers only) are not the parameters another episode's same text stood
        for: their step is computed, and not remembered."""
        if json.loads(text) != parameters:
            return compute()
        key = (id(before), operation, text, history)
        known = self.get(task, before, key)
        if known is not None:
            return known
        step = compute()
        if step.after is not step.before:
            self.remember(key, step)
        return step

    def get(self, task: Any, before: Snapshot, key: Key) -> Transition | None:
        """The step of `key`, if an episode of `task` took it from the table `before`."""
        with self._lock:
            found = self._entries.get(key)
            if found is None or found[0].before is not before or found[0].task() is not task:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def remember(self, key: Key, step: Transition) -> None:
        cost = weight(key, step)
        if cost > self.max_weight:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._weight -= previous[1]
            self._entries[key] = (step, cost)
            self._weight += cost
            while self._weight > self.max_weight or len(self._entries) > self.max_entries:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._weight -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._weight = 0
