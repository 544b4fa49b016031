"""The preservation-aware grader of generated tasks.

    total = 0.80 * repair + 0.20 * row integrity

* repair: the net share of the dirty table's wrong cells that are fixed,
  1 - (cells wrong now) / (cells wrong in dirty), floored at -1: every cell that is wrong
  now counts, a right cell broken (or lost with its row) as much as a wrong one left, so a
  step that leaves more cells wrong than it fixes lowers it, and doing nothing scores 0;
* preservation (shown, weight 0: its cost is already inside repair): of the cells that
  were already right, the share that still are;
* row integrity: 1 - (extra + missing rows) / max(1, submitted + expected).

Weighting repair and preservation apart (0.6 and 0.2 until grader-2) let a step that broke
many of the many right cells while fixing a few of the few wrong ones raise the total.

Rows are aligned by the key column (order ignored); a cell is (gold key, gold column), read
from the first row with that key and the column of the same name. A cell is right when its
column has the gold column's type and its value equals gold after canonicalisation within
that type (numbers within 0.005, dates as dates, text exactly) — never fuzzily; so the
text "42" is not yet the number 42. A fully correct table scores exactly 1.0 before the
API's clamp; doing nothing earns the dirty table's row integrity, and repair 0.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandas as pd

from dataclean_env.grading.abilities import GraderAbilities
from dataclean_env.grading.gold_facts import all_present, first_positions, key_text
from dataclean_env.grading.penalties import ActionRecord
from dataclean_env.grading.reward import clamp, reward_object
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import (
    MISSING,
    NUMBER_TOLERANCE,
    Kind,
    cells_equal,
    is_missing,
    kind_of,
)

WEIGHTS = {"repair_score": 0.8, "preservation_score": 0.0, "row_integrity_score": 0.2}
REPAIR_FLOOR = -1.0  # the net repair of a table wrecked beyond its dirty errors
Cell = tuple[str, str, Any]  # (key, gold column, gold value)
ByColumn = dict[str, list[tuple[str, Any]]]  # gold column -> [(key, canonical gold value)]


def _near(cell: Any, gold: float) -> bool:
    near: bool = abs(cell - gold) <= NUMBER_TOLERANCE
    return near


def _same_text(cell: Any, gold: str) -> bool:
    return cell == gold if type(cell) is str else str(cell) == gold


# How a present cell is compared with gold once its column has gold's type, so that the
# cell is already a number, bool, timestamp or text (what `cells_equal` would parse first).
_EQUAL: dict[Kind, Callable[[Any, Any], bool]] = {
    Kind.INT: _near,
    Kind.FLOAT: _near,
    Kind.BOOL: operator.eq,
    Kind.DATETIME: operator.eq,
    Kind.STR: _same_text,
}
_CANONICAL: dict[Kind, Callable[[Any], Any]] = {
    Kind.INT: float,
    Kind.FLOAT: float,
    Kind.BOOL: bool,
    Kind.STR: str,
}


def _keys(values: list[Any]) -> list[str | None]:
    return [None if v is MISSING else key_text(v) for v in values]


@dataclass(frozen=True)
class PreservationGrader(GraderAbilities):
    key: str
    kinds: Mapping[str, Kind]
    gold_keys: frozenset[str]
    to_repair: tuple[Cell, ...]
    to_preserve: tuple[Cell, ...]

    @classmethod
    def for_task(cls, dirty: pd.DataFrame, gold: pd.DataFrame, key: str) -> PreservationGrader:
        kinds = {c: kind_of(gold[c].dtype) for c in gold.columns}
        gold_keys = [key_text(v) for v in gold[key]]
        if not all_present(gold_keys) or len(set(gold_keys)) != len(gold_keys):
            raise ValueError(
                f"the key column {key!r} of the clean table must be unique and complete"
            )
        dirty_snapshot = Snapshot.of(dirty)
        first = first_positions(_keys(dirty_snapshot.values[key]) if key in dirty else [])
        to_repair: list[Cell] = []
        to_preserve: list[Cell] = []
        # Each gold column's cells read out once, as `iloc` gives them (numpy scalars,
        # Timestamps): a pandas lookup per cell cost most of building a generated task.
        gold_cells = {c: list(gold[c].array) for c in gold.columns if c != key}
        for position, gold_key in enumerate(gold_keys):
            row = first.get(gold_key)
            for column, cells in gold_cells.items():
                gold_value = cells[position]
                cell = (gold_key, column, None if is_missing(gold_value) else gold_value)
                right = row is not None and _cell_right(dirty_snapshot, row, column, cell[2], kinds)
                (to_preserve if right else to_repair).append(cell)
        return cls(key, kinds, frozenset(gold_keys), tuple(to_repair), tuple(to_preserve))

    def gold_rows_missing(self, snapshot: Snapshot) -> int:
        """Gold rows (by key) the table no longer holds. For harnesses, never for agents."""
        return len(self.gold_keys - self._first_rows_of(snapshot).keys())

    def _first_rows_of(self, snapshot: Snapshot) -> dict[str, int]:
        keys = _keys(snapshot.values[self.key]) if self.key in snapshot.values else []
        return first_positions(keys)

    def cells_wrong(self, snapshot: Snapshot) -> int:
        """Gold cells the table does not hold right. For harnesses, never for agents."""
        first = self._first_rows_of(snapshot)
        repaired = self._right(self._repair_by_column, snapshot, first)
        kept = self._right(self._preserve_by_column, snapshot, first)
        return len(self.to_repair) - repaired + len(self.to_preserve) - kept

    def components(self, snapshot: Snapshot) -> dict[str, float]:
        first = self._first_rows_of(snapshot)
        matched = sum(1 for k in self.gold_keys if k in first)
        submitted, expected = snapshot.n_rows, len(self.gold_keys)
        wrong_rows = (submitted - matched) + (expected - matched)
        to_repair, to_preserve = len(self.to_repair), len(self.to_preserve)
        kept = self._right(self._preserve_by_column, snapshot, first)
        wrong = to_repair - self._right(self._repair_by_column, snapshot, first)
        wrong += to_preserve - kept
        return {
            "repair_score": net_repair(wrong, to_repair),
            "preservation_score": kept / to_preserve if to_preserve else 1.0,
            "row_integrity_score": 1.0 - wrong_rows / max(1, submitted + expected),
        }

    # The cells grouped by column, gold canonicalised: grading runs on every step, and
    # comparing a column's cells in one loop is several times faster than cell by cell.
    @cached_property
    def _repair_by_column(self) -> ByColumn:
        return self._by_column(self.to_repair)

    @cached_property
    def _preserve_by_column(self) -> ByColumn:
        return self._by_column(self.to_preserve)

    def _by_column(self, cells: tuple[Cell, ...]) -> ByColumn:
        grouped: ByColumn = {}
        for key, column, gold in cells:
            canonical = _CANONICAL.get(self.kinds[column])
            value = gold if gold is None or canonical is None else canonical(gold)
            grouped.setdefault(column, []).append((key, value))
        return grouped

    def _right(self, cells: ByColumn, snapshot: Snapshot, first: dict[str, int]) -> int:
        """How many of `cells` the table holds right."""
        right = 0
        for column, column_cells in cells.items():
            kind = self.kinds[column]
            if snapshot.kinds.get(column) != kind:
                continue  # a column of the wrong type (or none) holds no right cell
            values, equal = snapshot.values[column], _EQUAL[kind]
            for key, gold in column_cells:
                row = first.get(key)
                if row is None:
                    continue
                cell = values[row]
                if gold is None:
                    right += cell is MISSING
                elif cell is not MISSING and equal(cell, gold):
                    right += 1
        return right

    def combine(
        self, scores: Mapping[str, float], history: Sequence[ActionRecord], max_steps: int
    ) -> dict[str, float]:
        total = sum(WEIGHTS[name] * score for name, score in scores.items())
        return {
            "total": clamp(total),
            **{name: clamp(score) for name, score in scores.items()},
            "penalty": clamp(0.0),
        }

    def reward(
        self, snapshot: Snapshot, history: Sequence[ActionRecord], max_steps: int
    ) -> dict[str, float]:
        return reward_object(self.combine(self.components(snapshot), history, max_steps))


def net_repair(wrong_now: int, wrong_in_dirty: int) -> float:
    """1 - wrong_now / wrong_in_dirty, floored at REPAIR_FLOOR: every wrong cell costs the
    same, whether dirty had it wrong or the agent broke it. A dirty table with nothing wrong
    scores 1 while it stays right."""
    if not wrong_in_dirty:
        return 1.0 if not wrong_now else REPAIR_FLOOR
    return max(REPAIR_FLOOR, 1.0 - wrong_now / wrong_in_dirty)


def _cell_right(
    snapshot: Snapshot, row: int, column: str, gold_value: Any, kinds: Mapping[str, Kind]
) -> bool:
    """The table's cell equals gold: same column type, equal value (missing if gold is)."""
    if snapshot.kinds.get(column) != kinds[column]:
        return False
    cell = snapshot.values[column][row]
    if gold_value is None:
        return cell is MISSING
    return cell is not MISSING and cells_equal(cell, gold_value, kinds[column])
