"""What the grader knows about a task, computed once when the task is loaded.

Rows are identified by the canonical value of the task's key column, so the grader aligns
the agent's table with gold whatever the row order. Nothing here ever reaches an agent.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pandas as pd

from dataclean_env.snapshot import Snapshot
from dataclean_env.values import MISSING, is_missing, kind_of, parse_number, snake_case


@lru_cache(maxsize=65536, typed=True)  # keys repeat on every step; values are hashable cells
def key_text(value: Any) -> str | None:
    """Canonical row key: 1001, 1001.0 and "1001" are the same row."""
    if value is MISSING or is_missing(value):
        return None
    number = parse_number(value)
    if number is not None and number.is_integer():
        return str(int(number))
    return str(value).strip()


@dataclass(frozen=True)
class TableView:
    """The agent's table, indexed for grading: row keys and where each key first appears."""

    snapshot: Snapshot
    key_counts: Counter
    first_row: dict[str, int]


@dataclass(frozen=True)
class GoldFacts:
    key: str
    kinds: dict[str, str]  # gold column -> kind, in gold order
    gold_keys: frozenset[str]
    outlier_keys: frozenset[str]  # rows of the dirty table that gold drops as outliers
    # (key, column, gold value) of every cell that is missing in dirty and present in gold
    missing_targets: tuple[tuple[str, str, Any], ...]

    @property
    def n_rows(self) -> int:
        return len(self.gold_keys)

    def key_column(self, columns: tuple[str, ...]) -> str | None:
        """The table's key column: the gold name, else the one header whose snake_case is it."""
        if self.key in columns:
            return self.key
        matches = [c for c in columns if snake_case(c) == self.key]
        return matches[0] if len(matches) == 1 else None

    def view(self, snapshot: Snapshot) -> TableView:
        column = self.key_column(snapshot.columns)
        if column is None:
            keys: list[str | None] = [None] * snapshot.n_rows
        else:
            keys = [key_text(v) for v in snapshot.values[column]]
        first_row: dict[str, int] = {}
        for position, key in enumerate(keys):
            if key is not None and key not in first_row:
                first_row[key] = position
        return TableView(snapshot, Counter(keys), first_row)


def build_facts(
    dirty: pd.DataFrame, gold: pd.DataFrame, key: str, header_map: dict[str, str] | None = None
) -> GoldFacts:
    """Facts of a dirty/gold pair; `header_map` names the gold column of each dirty header
    (default: the same name, else its snake_case)."""
    kinds = {c: kind_of(gold[c].dtype) for c in gold.columns}
    gold_keys = [key_text(v) for v in gold[key]]
    if None in gold_keys or len(set(gold_keys)) != len(gold_keys):
        raise ValueError(f"gold key column {key!r} must be unique and complete")
    facts = GoldFacts(key, kinds, frozenset(gold_keys), frozenset(), ())
    dirty_view = facts.view(Snapshot.of(dirty))
    outliers = frozenset(
        k for k in dirty_view.key_counts if k is not None and k not in facts.gold_keys
    )
    header_map = header_map or {}
    dirty_columns = {}
    for column in dirty.columns:
        gold_name = header_map.get(column, column if column in gold.columns else snake_case(column))
        dirty_columns[gold_name] = column
    targets = []
    for gold_position, gold_key in enumerate(gold_keys):
        dirty_position = dirty_view.first_row.get(gold_key)
        if dirty_position is None:
            continue
        for column in gold.columns:
            source = dirty_columns.get(column)
            gold_value = gold[column].iloc[gold_position]
            if source is None or is_missing(gold_value):
                continue
            if is_missing(dirty[source].iloc[dirty_position]):
                targets.append((gold_key, column, gold_value))
    return GoldFacts(key, kinds, frozenset(gold_keys), outliers, tuple(targets))
