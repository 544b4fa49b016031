"""The grader of real tables (bring-your-own folders): net repair, and the literature's
cell-repair precision, recall and F1.

The error-repair literature (Raha, Baran) scores a repaired table cell by cell against its
clean version, comparing values as the text the clean file holds:

* an **error** is a cell whose dirty text differs from its clean text (both trimmed);
* a cell is **changed** when it no longer holds its dirty text (or, in a typed column,
  when it became right or wrong by a cast); a cell of a row the table lost is changed;
* a changed cell is **repaired** when it now holds the clean value;
* precision = repaired / changed, recall = repaired / errors (0 when the denominator is 0,
  the convention of the Raha/Baran evaluation code), F1 their harmonic mean,
  which is 2 * repaired / (changed + errors).

The reward's total is **net repair**, max(0, (repaired - wrong changes) / errors), a wrong
change being every changed cell not repaired (C - R): a wrong change costs what a right fix
earns, as in the generated families' grader. Doing nothing scores 0, the clean table 1, and
a step whose wrong changes outnumber its repairs lowers the score. F1 does not serve as
the total: written as 2R / (C + E) it pays any step that repairs some cells however many
more it breaks (fixing 10 and breaking 11 raises it while it is below 0.95; dropping every
row of a table with added rows repairs their cells). Precision, recall and F1 stay in the
breakdown unchanged, the figures the literature reports.

Columns: the agent's column at the dirty column's position (no operation adds, drops or
moves columns), so renaming is cosmetic and earns nothing; the dirty column is matched to
the clean one by position or by the task's explicit map. A task may grade headers (each
header is then one more cell) and declare typed columns (a cell is right only when its
column has that type and its value equals the clean text read as that type).

Rows: by the task's key column (or by position, through an added `row_id`). A dirty row
the clean table does not have (or a second copy of a key) is an error in each of its
cells; removing it repairs them, and a row the table gains is a change in each of its
cells. Nothing here reaches an agent but the four figures.
"""

from __future__ import annotations

import operator
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from typing import Any

import numpy as np
import pandas as pd

from dataclean_env.grading.abilities import GraderAbilities
from dataclean_env.grading.cell_text import (
    _LOST,
    ABSENT,
    _clean_value,
    _texts,
    cell_text,
)
from dataclean_env.grading.gold_facts import all_present, first_positions, key_text
from dataclean_env.grading.penalties import ActionRecord
from dataclean_env.grading.reward import clamp
from dataclean_env.table.int_keys import int_keys, integer_of
from dataclean_env.table.snapshot import Edit, Snapshot
from dataclean_env.table.values import (
    MISSING,
    Kind,
    cells_equal,
)

WEIGHTS = {"net_repair": 1.0}
# The grader's cache holds the value lists it graded (so their ids stay unique): at most
# this many cells' worth of them, about 8 bytes each, whatever the table's size.
_CACHE_CELLS = 2_000_000


@dataclass(frozen=True)
class RepairCounts:
    errors: int  # cells that were wrong in the dirty table
    changed: int  # cells that no longer hold their dirty value
    repaired: int  # changed cells that now hold the clean value

    @property
    def precision(self) -> float:
        return self.repaired / self.changed if self.changed else 0.0

    @property
    def recall(self) -> float:
        return self.repaired / self.errors if self.errors else 0.0

    @property
    def f1(self) -> float:
        denominator = self.changed + self.errors
        return 2 * self.repaired / denominator if denominator else 0.0

    @property
    def net_repair(self) -> float:
        """(repaired - wrong changes) / errors, at least 0 (0 when there are no errors)."""
        wrong_changes = self.changed - self.repaired
        return max(0.0, (self.repaired - wrong_changes) / self.errors) if self.errors else 0.0

    def scores(self) -> dict[str, float]:
        """The literature's figures (the protocol report's, so net repair is not one)."""
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1}


@dataclass(frozen=True)
class GradedColumn:
    position: int  # in the dirty table (and so in every table of the episode)
    dirty_name: str
    clean_name: str
    kind: Kind | None  # a declared type, or None: compared as text
    clean: tuple[Any, ...]  # per clean row: clean text, or the clean value of `kind`
    dirty: tuple[str | None, ...]  # per clean row: dirty text (ABSENT: row not in dirty)
    dirty_right: tuple[bool, ...]

    @cached_property
    def errors(self) -> tuple[int, ...]:
        """Clean-row positions whose dirty cell is wrong."""
        return tuple(i for i, right in enumerate(self.dirty_right) if not right)

    @cached_property
    def error_cells(self) -> tuple[Callable[[Sequence[Any]], Sequence[Any]], tuple[Any, ...]]:
        """(picks the error positions' cells from a list, their clean values): a column's
        repairs are counted in one C-level comparison."""
        errors = self.errors
        if len(errors) == 1:
            return (lambda cells: (cells[errors[0]],)), (self.clean[errors[0]],)
        if not errors:
            return (lambda cells: ()), ()
        pick = operator.itemgetter(*errors)
        return pick, pick(self.clean)


@dataclass(frozen=True, eq=False)
class _Alignment:
    picks: list[int]  # per clean row: its position in the table, or n_rows (not there)
    extra: Counter[Any]  # key -> rows beyond the first (or rows of keys clean lacks)
    n_rows: int  # rows of the table it was computed for

    @cached_property
    def rows(self) -> tuple[int | None, ...]:
        """Per clean row: its position in the table, or None."""
        lost = self.n_rows
        return tuple(None if pick == lost else pick for pick in self.picks)

    @cached_property
    def lost(self) -> int:
        """Clean rows the table does not hold."""
        return self.picks.count(self.n_rows)

    @cached_property
    def gather(self) -> Callable[[list[Any]], tuple[Any, ...]]:
        """Picks each clean row's cell from a column list with `_LOST` appended (C speed)."""
        picks = self.picks
        if len(picks) == 1:
            return lambda cells: (cells[picks[0]],)
        return operator.itemgetter(*picks)

    @cached_property
    def identity(self) -> bool:
        """Clean row i is the table's row i, for every i (nothing dropped or moved)."""
        return self.n_rows >= len(self.picks) and self.picks == list(range(len(self.picks)))


class CellRepairGrader(GraderAbilities):
    offers_labels = True
    """Built once per task from the dirty and clean tables (as the episode loads them)."""

    def __init__(
        self,
        dirty: pd.DataFrame,
        clean: pd.DataFrame,
        key: str,
        column_map: Mapping[str, str],
        kinds: Mapping[str, Kind] | None = None,
        grade_headers: bool = False,
    ):
        self.key = key
        self.grade_headers = grade_headers
        self.n_dirty_columns = len(dirty.columns)
        clean_keys = [key_text(v) for v in clean[key]]
        if not all_present(clean_keys) or len(set(clean_keys)) != len(clean_keys):
            raise ValueError(
                f"the key column {key!r} of the clean table must be unique and complete"
            )
        self.clean_keys: tuple[str, ...] = tuple(clean_keys)
        self.gold_keys = frozenset(self.clean_keys)
        kinds = dict(kinds or {})
        self._lock = threading.Lock()
        self._cache: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._cached_cells = 0
        dirty_snapshot = Snapshot.of(dirty)
        self._dirty_alignment = self._align(dirty_snapshot.values[key])
        columns = []
        for position, dirty_name in enumerate(dirty.columns):
            clean_name = column_map.get(dirty_name)
            if dirty_name == key or clean_name is None:
                continue
            kind = kinds.get(clean_name)
            clean_values = [_clean_value(v, kind, clean_name) for v in clean[clean_name]]
            values = dirty_snapshot.values[dirty_name]
            dirty_text = [
                ABSENT if row is None else cell_text(values[row])
                for row in self._dirty_alignment.rows
            ]
            probe = GradedColumn(
                position, dirty_name, clean_name, kind, tuple(clean_values), tuple(dirty_text), ()
            )
            right, _ = _column_state(
                probe, values, dirty_snapshot.kinds[dirty_name], self._dirty_alignment
            )
            columns.append(
                GradedColumn(
                    position,
                    dirty_name,
                    clean_name,
                    kind,
                    tuple(clean_values),
                    tuple(dirty_text),
                    tuple(right),
                )
            )
        self.columns: tuple[GradedColumn, ...] = tuple(columns)
        # Clean columns no dirty column maps to: their cells are errors nothing can repair.
        mapped = {c.clean_name for c in columns}
        unmapped = [c for c in clean.columns if c != key and c not in mapped]
        self._unrepairable = len(unmapped) * len(self.clean_keys)
        self.dirty_errors = self.counts(dirty_snapshot).errors

    # ── grading ───────────────────────────────────────────────────────────
    def counts(self, snapshot: Snapshot) -> RepairCounts:
        alignment = self._alignment_of(snapshot)
        width = len(self.columns)
        errors = self._unrepairable + sum(self._dirty_alignment.extra.values()) * width
        changed = repaired = 0
        for column in self.columns:
            name = self._name_in(snapshot, column)
            col_errors, col_changed, col_repaired = self._column_counts(
                column, snapshot, name, alignment
            )
            errors += col_errors
            changed += col_changed
            repaired += col_repaired
        # Extra rows: each cell of a removed one is a repair, of an added one a change.
        removed, added = self._extra_rows_moved(alignment)
        changed += (removed + added) * width
        repaired += removed * width
        if self.grade_headers:
            for column in self.columns:
                name = self._name_in(snapshot, column)
                errors += column.dirty_name.strip() != column.clean_name.strip()
                if name is not None and name.strip() != column.dirty_name.strip():
                    changed += 1
                    repaired += name.strip() == column.clean_name.strip()
        return RepairCounts(errors, changed, repaired)

    def _extra_rows_moved(self, alignment: _Alignment) -> tuple[int, int]:
        """(rows the clean table lacks that are gone, rows the table gained) since dirty."""
        before, after = self._dirty_alignment.extra, alignment.extra
        if not after:  # the usual case once repeats are gone: no Counter arithmetic
            return sum(before.values()), 0
        return sum((before - after).values()), sum((after - before).values())

    def detection(self, snapshot: Snapshot) -> RepairCounts:
        """Error detection as the literature scores it, a changed cell counting as one the
        agent flagged: (errors, cells flagged, flagged cells that were errors). For reports
        only (it walks every cell; a step never calls it)."""
        alignment = self._alignment_of(snapshot)
        flagged = found = 0
        for column in self.columns:
            name = self._name_in(snapshot, column)
            if name is None:
                continue
            _, changed = _column_state(
                column, snapshot.values[name], snapshot.kinds[name], alignment
            )
            flagged += sum(changed)
            found += sum(1 for at in column.errors if changed[at])
        # A row the clean table lacks, deleted: each of its cells flagged and an error.
        removed, added = self._extra_rows_moved(alignment)
        flagged += (removed + added) * len(self.columns)
        found += removed * len(self.columns)
        return RepairCounts(self.dirty_errors, flagged, found)

    def components(self, snapshot: Snapshot) -> dict[str, float]:
        counts = self.counts(snapshot)
        return {
            **counts.scores(),
            "net_repair": counts.net_repair,
            "changed": float(counts.changed),
        }

    def combine(
        self, scores: Mapping[str, float], history: Sequence[ActionRecord], max_steps: int
    ) -> dict[str, float]:
        return {
            "total": clamp(scores["net_repair"]),
            "net_repair": clamp(scores["net_repair"]),
            "precision": clamp(scores["precision"]),
            "recall": clamp(scores["recall"]),
            "f1": clamp(scores["f1"]),
            "penalty": clamp(0.0),
        }

    def reward(
        self, snapshot: Snapshot, history: Sequence[ActionRecord], max_steps: int
    ) -> dict[str, float]:
        return self.combine(self.components(snapshot), history, max_steps)

    def repair_report(self, scores: Mapping[str, float]) -> dict[str, float | int]:
        """Exact figures for `info`, `/state` and the runner (not clamped, not rounded)."""
        return {
            "precision": scores["precision"],
            "recall": scores["recall"],
            "f1": scores["f1"],
            "cells_changed": int(scores["changed"]),
        }

    def clean_rows(self, keys: Sequence[Any]) -> dict[str, dict[str, str] | None]:
        """The clean row of each key, by the dirty table's column names, as text (None for a
        key the clean table lacks). Only `label` asks, within its budget."""
        positions = self._clean_positions
        rows: dict[str, dict[str, str] | None] = {}
        for key in keys:
            text = key_text(key)
            at = positions.get(text) if text is not None else None
            rows[str(text)] = (
                None if at is None else {c.dirty_name: cell_text(c.clean[at]) for c in self.columns}
            )
        return rows

    @cached_property
    def _clean_positions(self) -> dict[str, int]:
        return {key: i for i, key in enumerate(self.clean_keys)}

    def gold_rows_missing(self, snapshot: Snapshot) -> int:
        """Clean rows the table no longer holds. For harnesses, never for agents."""
        return self._alignment_of(snapshot).lost

    # ── internals ─────────────────────────────────────────────────────────
    def _name_in(self, snapshot: Snapshot, column: GradedColumn) -> str | None:
        if len(snapshot.columns) == self.n_dirty_columns:
            return snapshot.columns[column.position]
        for name in (column.dirty_name, column.clean_name):
            if name in snapshot.values:
                return name
        return None

    def _align(self, keys: list[Any]) -> _Alignment:
        """Each clean key's first row; every other row (a repeat, a missing key or a key
        clean lacks) counted in `extra` by its key."""
        aligned = self._align_ints(keys)
        if aligned is not None:
            return aligned
        texts = [None if v is MISSING else key_text(v) for v in keys]
        first = first_positions(texts)
        counts = Counter(texts)
        extra: Counter[Any] = Counter()
        if len(counts) == len(texts):  # no repeats: only keys clean lacks are extra
            extra.update(counts.keys() - self.gold_keys)
        else:
            for key, count in counts.items():
                if key is None or key not in self.gold_keys:
                    extra[key] = count
                elif count > 1:
                    extra[key] = count - 1
        picks = list(map(first.get, self.clean_keys, repeat(len(keys))))
        return _Alignment(picks, extra, len(keys))

    def _align_ints(self, keys: list[Any]) -> _Alignment | None:
        """`_align` of integer keys, in numpy: an int key's text is `str(key)` while a float
        holds it exactly (key_text reads keys as numbers), so it can only be a clean key
        whose text is an integer's own. None for other keys."""
        table = int_keys(keys)
        if table is None:
            return None
        clean, clean_rows = self._int_clean_keys
        n_rows = len(keys)
        if clean.size:
            slot = np.minimum(np.searchsorted(clean, table), clean.size - 1)
            found = clean[slot] == table
            at = np.flatnonzero(found)
            # The first row holding each clean key (np.unique returns first occurrences).
            matched, first = np.unique(clean_rows[slot[at]], return_index=True)
            first_rows = at[first]
        else:
            matched = first_rows = np.zeros(0, dtype=np.int64)
        picks = np.full(len(self.clean_keys), n_rows, dtype=np.int64)
        picks[matched] = first_rows
        others = np.ones(n_rows, dtype=bool)
        others[first_rows] = False
        extra = Counter(map(str, table[others].tolist()))
        return _Alignment(picks.tolist(), extra, n_rows)

    @cached_property
    def _int_clean_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """The clean keys that are integers' own texts, sorted, and their clean rows."""
        numbers, rows = [], []
        for row, text in enumerate(self.clean_keys):
            number = integer_of(text)
            if number is not None:
                numbers.append(number)
                rows.append(row)
        order = np.argsort(np.array(numbers, dtype=np.int64), kind="stable")
        return (
            np.array(numbers, dtype=np.int64)[order],
            np.array(rows, dtype=np.int64)[order],
        )

    def _alignment_of(self, snapshot: Snapshot) -> _Alignment:
        keys = snapshot.values.get(self.key)
        if keys is None:  # the key column is protected, so this cannot happen in an episode
            lost = [snapshot.n_rows] * len(self.clean_keys)
            return _Alignment(lost, Counter(), snapshot.n_rows)
        cache_key = ("rows", id(keys))
        hit = self._cache.get(cache_key)
        if hit is not None and hit[0] is keys:
            cached: _Alignment = hit[1]
            return cached
        alignment = self._align(keys)
        self._remember(cache_key, (keys, alignment))
        return alignment

    def _column_counts(
        self, column: GradedColumn, snapshot: Snapshot, name: str | None, alignment: _Alignment
    ) -> tuple[int, int, int]:
        """(errors, changed, repaired) of one column; cached by the identity of the column's
        values and of the row alignment (snapshots share unchanged columns' lists)."""
        errors = len(column.errors)
        if name is None:  # cannot happen in an episode: every cell is lost
            lost = sum(1 for text in column.dirty if text is not ABSENT)
            return errors, lost, 0
        values, kind = snapshot.values[name], snapshot.kinds[name]
        cache_key = ("cells", column.position, id(values), id(alignment), kind)
        hit = self._cache.get(cache_key)
        if hit is not None and hit[0] is values and hit[1] is alignment:
            counts: tuple[int, int, int] = hit[2]
            return counts
        edited = self._edited_counts(column, snapshot.edits.get(name), values, kind, alignment)
        if edited is not None:
            result = edited
        elif column.kind in (None, Kind.STR):
            result = (errors, *_text_column_counts(column, values, kind, alignment))
        else:
            right, changed = _column_state(column, values, kind, alignment)
            repaired = sum(
                1
                for now, was, moved in zip(right, column.dirty_right, changed, strict=True)
                if now and moved and not was
            )
            result = (errors, sum(changed), repaired)
        self._remember(cache_key, (values, alignment, result))
        return result

    def _edited_counts(
        self,
        column: GradedColumn,
        edit: Edit | None,
        values: list[Any],
        kind: Kind,
        alignment: _Alignment,
    ) -> tuple[int, int, int] | None:
        """A text-compared column's counts from those of the list a step edited, updated by
        the cells it touched alone; None when they are not known (no edit, the counts of
        `edit.before` no longer cached, or rows that moved)."""
        if edit is None or edit.after is not values or column.kind not in (None, Kind.STR):
            return None
        if not alignment.identity:
            return None
        hit = self._cache.get(("cells", column.position, id(edit.before), id(alignment), kind))
        if hit is None or hit[0] is not edit.before or hit[1] is not alignment:
            return None
        errors, changed, repaired = hit[2]
        graded = len(column.clean)  # table rows past these are extra rows, not graded here
        for at in edit.at:
            if at >= graded:
                continue
            old, new = cell_text(edit.before[at]), cell_text(values[at])
            dirty = column.dirty[at]
            changed += (new != dirty) - (old != dirty)
            if not column.dirty_right[at]:
                clean = column.clean[at]
                repaired += (new == clean) - (old == clean)
        return errors, changed, repaired

    def _remember(self, key: tuple[Any, ...], entry: tuple[Any, ...]) -> None:
        # Entries hold references to the lists they were computed from, so an id cannot be
        # reused while its entry lives; the oldest entries go first once the lists they
        # hold would pass _CACHE_CELLS.
        size = len(entry[0])
        with self._lock:
            if key in self._cache:  # another thread graded the same list meanwhile
                self._cached_cells -= len(self._cache.pop(key)[0])
            while self._cache and self._cached_cells + size > _CACHE_CELLS:
                oldest = next(iter(self._cache))
                self._cached_cells -= len(self._cache.pop(oldest)[0])
            self._cache[key] = entry
            self._cached_cells += size


def _text_column_counts(
    column: GradedColumn, values: list[Any], kind: Kind, alignment: _Alignment
) -> tuple[int, int]:
    """(changed, repaired) of a text-compared column, in list comprehensions and C-level
    maps (a few ms per 10,000 cells). A lost row's text is ABSENT: changed unless dirty
    lacked the row too, and never right."""
    cells = values if alignment.identity else alignment.gather([*values, _LOST])
    texts = _texts(cells, kind)
    changed = sum(map(operator.ne, texts, column.dirty))
    # A wrong dirty cell that now equals clean has changed (its text differs from dirty).
    pick, clean = column.error_cells
    repaired = sum(map(operator.eq, pick(texts), clean))
    return changed, repaired


def _column_state(
    column: GradedColumn, values: list[Any], kind: Kind, alignment: _Alignment
) -> tuple[list[bool], list[bool]]:
    """Per clean row: is the cell right now, and has it changed since the dirty table."""
    right: list[bool] = []
    changed: list[bool] = []
    dirty_right = column.dirty_right or (False,) * len(column.clean)
    typed = column.kind is not None and column.kind != Kind.STR
    for row, clean, dirty, was in zip(
        alignment.rows, column.clean, column.dirty, dirty_right, strict=True
    ):
        if row is None:
            right.append(False)
            changed.append(dirty is not ABSENT)
            continue
        value = values[row]
        text = cell_text(value)
        if typed:
            now = (
                (value is MISSING)
                if clean == ""
                else kind == column.kind and cells_equal(value, clean, kind)
            )
        else:
            now = text == clean
        right.append(now)
        changed.append(text != dirty or (bool(column.dirty_right) and now != was))
    return right, changed
