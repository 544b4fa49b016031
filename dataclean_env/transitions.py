"""Steps already taken from a table, shared by every episode that takes them again.

The episodes of one task instance start from one shared opening (`episode.opening_of`), and
an operation's result depends only on the table it is applied to, its parameters, the task
and the operations before it. So when an episode applies an action another episode already
applied to the very same committed table (the rollouts of a GRPO group, the runs of one
leaderboard seed, an agent replayed), it takes that step's result instead of computing it
again: the new table and its snapshot, profiles and grading. The answer is the same bytes
either way (`tests/unit/test_engine_equivalence.py`): an operation never changes the table
it is given, and a step replaces an episode's table rather than editing it, so tables and
snapshots are values that episodes can share.

Keys hold the table's snapshot object itself (not a copy of its contents): looking a step
up costs a dict lookup, and a snapshot is only ever reached by taking the same steps from
the same opening. Entries are kept least-recently-used first out, bounded by the cells of
the tables they hold, and only for tables small enough that recomputing costs more than
remembering.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, NamedTuple

from dataclean_env.operations import OpResult
from dataclean_env.snapshot import Snapshot

MAX_TABLE_CELLS = 20_000  # larger tables: their steps are not remembered
MAX_CELLS = 2_000_000  # all remembered tables together (their snapshots' cells)

# (id of the snapshot before, operation, parameters as JSON, operations before it)
Key = tuple[int, str, str, tuple[str, ...]]


class Transition(NamedTuple):  # a tuple: made on every step, and cheaper than a dataclass
    task: Any  # the Task whose episode took the step (its grader graded `after`)
    before: Snapshot  # held, so that its id in the key names no other snapshot
    result: OpResult
    after: Snapshot  # `before` itself when the operation changed nothing
    profiles: dict[str, dict[str, Any]]  # of `after`
    scores: dict[str, float]
    view: Any  # what the grader indexed of `after`
    budget_before: Any  # the TableBudget that admitted `after`, and what it gave
    budget_after: Any

    @property
    def cells(self) -> int:
        return self.after.n_rows * len(self.after.columns)


class Transitions:
    def __init__(self, max_cells: int = MAX_CELLS):
        self.max_cells = max_cells
        self._entries: OrderedDict[Key, Transition] = OrderedDict()
        self._cells = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, task: Any, before: Snapshot, key: Key) -> Transition | None:
        """The step of `key`, if an episode of `task` took it from the table `before`."""
        with self._lock:
            found = self._entries.get(key)
            if found is None or found.before is not before or found.task is not task:
                return None
            self._entries.move_to_end(key)
            return found

    def remember(self, key: Key, transition: Transition) -> None:
        if transition.cells > MAX_TABLE_CELLS:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._cells -= previous.cells
            self._entries[key] = transition
            self._cells += transition.cells
            while self._cells > self.max_cells:
                _, dropped = self._entries.popitem(last=False)
                self._cells -= dropped.cells

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._cells = 0


TRANSITIONS = Transitions()  # one per process: keys name snapshots, which name their task
