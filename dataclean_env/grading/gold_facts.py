"""What the grader knows about a task, computed once when the task is loaded.

Rows are identified by the canonical value of the task's key column, so the grader aligns
the agent's table with gold whatever the row order. Nothing here ever reaches an agent.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, TypeGuard, cast

import pandas as pd

from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import (
    MISSING,
    NUMBER_TOLERANCE,
    NUMERIC_KINDS,
    Kind,
    cells_equal,
    is_missing,
    kind_of,
    parse_number,
    snake_case,
)

Anchors = Mapping[str, tuple[tuple[str, Any], ...]]  # gold column -> ((key, gold value), ...)


@lru_cache(maxsize=65536, typed=True)  # keys repeat on every step; values are hashable cells
def key_text(value: Any) -> str | None:
    """Canonical row key: 1001, 1001.0 and "1001" are the same row."""
    if value is MISSING or is_missing(value):
        return None
    number = parse_number(value)
    if number is not None and number.is_integer():
        return str(int(number))
    return str(value).strip()


def first_positions(keys: list[str | None]) -> dict[str, int]:
    """Each key's first position in `keys`, missing keys (None) left out. Built backwards in
    one pass in C: the first position of a repeated key is the one written last."""
    positions = range(len(keys) - 1, -1, -1)
    first: dict[str | None, int] = dict(zip(reversed(keys), positions, strict=True))
    first.pop(None, None)
    return cast(dict[str, int], first)


def all_present(keys: list[str | None]) -> TypeGuard[list[str]]:
    """No key is missing (`key_text` gave None for none of them)."""
    return None not in keys


@dataclass(frozen=True)
class KeyedTable:
    """The agent's table, indexed for grading: row keys, where each key first appears, and
    the gold columns it holds in their place (`kinds`: a gold-named column holding another
    column's values is `misplaced` and counts as absent)."""

    snapshot: Snapshot
    key_counts: Counter[Any]
    first_row: dict[str, int]
    misplaced: frozenset[str] = frozenset()
    key_values: list[Any] | None = None  # the key column's cells the rows were read from

    @property
    def kinds(self) -> dict[str, Kind]:
        """Kinds of the table's columns, without the misplaced ones."""
        kinds = self.snapshot.kinds
        if not self.misplaced:
            return kinds
        return {c: k for c, k in kinds.items() if c not in self.misplaced}


@dataclass(frozen=True)
class GoldFacts:
    key: str
    kinds: dict[str, Kind]  # gold column -> kind, in gold order
    gold_keys: frozenset[str]
    outlier_keys: frozenset[str]  # rows of the dirty table that gold drops as outliers
    # (key, column, gold value) of every cell that is missing in dirty and present in gold
    missing_targets: tuple[tuple[str, str, Any], ...]
    # The cells already right in dirty (present and equal to gold), per gold column. No
    # operation of a fixed task changes a present value, so a column whose anchors no longer
    # hold gold's values is another column under this one's name (a swap or rotation).
    anchors: Anchors = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return len(self.gold_keys)

    def key_column(self, columns: tuple[str, ...]) -> str | None:
        """The table's key column: the gold name, else the one header whose snake_case is it."""
        if self.key in columns:
            return self.key
        matches = [c for c in columns if snake_case(c) == self.key]
        return matches[0] if len(matches) == 1 else None

    def keyed(self, snapshot: Snapshot, previous: KeyedTable | None = None) -> KeyedTable:
        """The table indexed for grading. `previous`, the keyed table of the episode's table before
        this step, lends what still holds: a snapshot shares the value list of every column
        a step left alone, so when the key column's list is the very same object the rows
        are too, and so is the verdict on each column whose list is the same object."""
        column = self.key_column(snapshot.columns)
        key_values = None if column is None else snapshot.values[column]
        if previous is not None and key_values is not None and previous.key_values is key_values:
            counts, first_row = previous.key_counts, previous.first_row
            misplaced = self._misplaced(snapshot, first_row, previous)
            return KeyedTable(snapshot, counts, first_row, misplaced, key_values)
        if key_values is None:
            keys: list[str | None] = [None] * snapshot.n_rows
        else:
            keys = list(map(key_text, key_values))
        firsts = first_positions(keys)
        misplaced = self._misplaced(snapshot, firsts)
        return KeyedTable(snapshot, Counter(keys), firsts, misplaced, key_values)

    def _misplaced(
        self, snapshot: Snapshot, first_row: dict[str, int], same_rows: KeyedTable | None = None
    ) -> frozenset[str]:
        """Gold columns present with gold's kind whose present rows no longer hold every
        value that was already right in dirty. `same_rows`: an earlier keyed table with these very
        rows, whose verdict stands for every column whose value list it shares."""
        misplaced = []
        for column, cells in self._anchor_texts.items():
            kind = self.kinds[column]
            if snapshot.kinds.get(column) != kind:
                continue  # absent or of another kind: already an error where it matters
            values = snapshot.values[column]
            if same_rows is not None and same_rows.snapshot.values.get(column) is values:
                if column in same_rows.misplaced:  # its kind was checked then as now
                    misplaced.append(column)
                continue
            if _all_equal(cells, values, first_row, kind):
                continue
            for key, gold, canonical in cells:
                row = first_row.get(key)
                if row is not None and not holds(values[row], gold, canonical, kind):
                    misplaced.append(column)
                    break
        return frozenset(misplaced)

    @cached_property
    def missing_canonicals(self) -> tuple[tuple[str, str, Any, Any], ...]:
        """`missing_targets` with each gold value's canonical form (see `holds`)."""
        return tuple(
            (key, column, gold, _canonical(gold, self.kinds[column]))
            for key, column, gold in self.missing_targets
        )

    @cached_property
    def _anchor_texts(self) -> dict[str, _Anchors]:
        """The anchors with gold's value in the form `holds` compares first: the float of a
        number, the Timestamp of a date, the text of a str column's value (else None)."""
        return {
            column: _Anchors(
                (key, gold, _canonical(gold, self.kinds[column])) for key, gold in cells
            )
            for column, cells in self.anchors.items()
        }


class _Anchors(tuple):  # type: ignore[type-arg]
    """A column's (key, gold value, canonical form) triples, with the keys and canonical
    forms also as lists, for the comparison of the whole column at once."""

    keys: list[str]
    canonicals: list[Any]
    exact: bool  # every canonical form is a text or a finite float

    def __new__(cls, triples: Any) -> _Anchors:
        anchors = super().__new__(cls, triples)
        anchors.keys = [key for key, _, _ in anchors]
        anchors.canonicals = [canonical for _, _, canonical in anchors]
        anchors.exact = all(
            c.__class__ is str
            or (c.__class__ is float and math.isfinite(c))
            or c.__class__ is pd.Timestamp  # NaT is of another class
            for c in anchors.canonicals
        )
        return anchors


_NUMBERS = frozenset({int, float})
_DATES = frozenset({pd.Timestamp})
# Kinds as module constants: these run per anchor cell, and reading `Kind.X` costs more.
_STR, _DATETIME = Kind.STR, Kind.DATETIME
_EXACT_KINDS = frozenset({Kind.STR, Kind.INT, Kind.FLOAT, Kind.DATETIME})


def _all_equal(anchors: _Anchors, values: list[Any], first_row: dict[str, int], kind: Kind) -> bool:
    """True when every anchor row present holds exactly its canonical form, compared as
    whole lists (in C): then `holds` would be true for each. False means "look closer"."""
    if not anchors.exact or kind not in _EXACT_KINDS:
        return False
    rows = list(map(first_row.get, anchors.keys))
    if None in rows:
        return False
    cells = list(map(values.__getitem__, cast(list[int], rows)))
    if cells != anchors.canonicals:
        return False
    # Equal lists: str cells equal to gold's text, or numbers equal to gold's (a bool equals
    # 1.0 too, but is not a number here: every cell must be an int or a float), or dates.
    if kind == _STR:
        return True
    return set(map(type, cells)) <= (_DATES if kind == _DATETIME else _NUMBERS)


def _canonical(gold: Any, kind: Kind) -> Any:
    if kind in NUMERIC_KINDS:
        return float(gold)
    if kind == _DATETIME:
        return pd.Timestamp(gold)
    return str(gold) if kind == _STR else None


def holds(cell: Any, gold: Any, canonical: Any, kind: Kind) -> bool:
    """`cells_equal(cell, gold, kind)` for a present gold value and a snapshot cell, with
    the common cases (a float or int cell of a number column, a text cell of a str column)
    compared directly: this runs for every anchor cell of every graded table."""
    if cell is MISSING:
        return False
    cls = cell.__class__
    if kind == _STR and cls is str:
        equal: bool = cell == canonical
        return equal
    if (cls is float or cls is int) and kind in NUMERIC_KINDS:
        number = float(cell)  # what parse_number does to a Python number
        return math.isfinite(number) and abs(number - canonical) <= NUMBER_TOLERANCE
    if cls is pd.Timestamp and kind == _DATETIME:  # a snapshot's NaT is MISSING
        return bool(cell == canonical)  # what parse_date does to a present Timestamp
    return cells_equal(cell, gold, kind)


def build_facts(
    dirty: pd.DataFrame, gold: pd.DataFrame, key: str, header_map: dict[str, str] | None = None
) -> GoldFacts:
    """Facts of a dirty/gold pair; `header_map` names the gold column of each dirty header
    (default: the same name, else its snake_case)."""
    kinds = {c: kind_of(gold[c].dtype) for c in gold.columns}
    gold_keys = [key_text(v) for v in gold[key]]
    if not all_present(gold_keys) or len(set(gold_keys)) != len(gold_keys):
        raise ValueError(f"gold key column {key!r} must be unique and complete")
    facts = GoldFacts(key, kinds, frozenset(gold_keys), frozenset(), ())
    dirty_keyed = facts.keyed(Snapshot.of(dirty))
    outliers = frozenset(
        k for k in dirty_keyed.key_counts if k is not None and k not in facts.gold_keys
    )
    header_map = header_map or {}
    dirty_columns = {}
    for column in dirty.columns:
        gold_name = header_map.get(column, column if column in gold.columns else snake_case(column))
        dirty_columns[gold_name] = column
    targets = []
    anchors: dict[str, list[tuple[str, Any]]] = {}
    for gold_position, gold_key in enumerate(gold_keys):
        dirty_position = dirty_keyed.first_row.get(gold_key)
        if dirty_position is None:
            continue
        for column in gold.columns:
            source = dirty_columns.get(column)
            gold_value = gold[column].iloc[gold_position]
            if source is None or is_missing(gold_value):
                continue
            dirty_value = dirty[source].iloc[dirty_position]
            if is_missing(dirty_value):
                targets.append((gold_key, column, gold_value))
            elif column != key and cells_equal(dirty_value, gold_value, kinds[column]):
                anchors.setdefault(column, []).append((gold_key, gold_value))
    return GoldFacts(
        key,
        kinds,
        frozenset(gold_keys),
        outliers,
        tuple(targets),
        {column: tuple(cells) for column, cells in anchors.items()},
    )
