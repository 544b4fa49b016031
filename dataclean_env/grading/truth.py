"""The truth that claims are checked against: which cells of a dirty table differ from gold.

An error is a unit of the dirty table: a cell `(row id, column)` whose text differs from the
gold cell's text (trimmed; whole floats written as integers, dates as ISO text, missing as
empty), or a whole row `(row id, "*")` that gold does not have (a duplicate record under
its own id). Every error has a type from `ERROR_TYPES`: generators give the type of the
error they planted; for tables brought as a dirty/clean pair it is read from the two texts
(`classify`). The truth is built once per task and never shown to an agent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dataclean_env.grading.gold_facts import key_text
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import MISSING, is_missing, parse_number

ERROR_TYPES = (
    "missing",
    "wrong_type",
    "out_of_range",
    "bad_format",
    "not_in_domain",
    "duplicate_row",
    "inconsistent",
)
ROW = "*"  # the column of a whole-row error
NULL_TOKENS = frozenset({"", "n/a", "na", "null", "none", "nan", "-", "?", "--"})
# A clean text column with at most this many distinct values is a domain: a dirty value
# outside it is not_in_domain (on tables with no planted types).
DOMAIN_VALUES = 50
# Spellings agents write for the types, mapped to the one name each type has here.
_TYPE_SPELLINGS = {
    "inconsistent_with_another_column": "inconsistent",
    "inconsistency": "inconsistent",
    "duplicate": "duplicate_row",
    "out_of_domain": "not_in_domain",
    "format": "bad_format",
    "type": "wrong_type",
    "range": "out_of_range",
    "null": "missing",
}
Unit = tuple[str, str]  # (row id text, column or ROW)


def error_type(name: str | None) -> str | None:
    """The canonical type for an agent's spelling ("wrong type", "Wrong-Type"), or None."""
    if name is None:
        return None
    text = re.sub(r"[\s\-]+", "_", name.strip().lower())
    text = _TYPE_SPELLINGS.get(text, text)
    return text if text in ERROR_TYPES else None


def cell_text(value: Any) -> str:
    """A cell as the text a CSV would hold: trimmed, whole numbers without '.0', dates ISO."""
    if value is MISSING or is_missing(value):
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, pd.Timestamp):
        if value.hour or value.minute or value.second:
            return value.isoformat()
        return str(value.date())
    return str(value).strip()


def same_text(text: str, gold: str) -> bool:
    """Equal texts, or two plain numbers of equal value ("1.50" and "1.5")."""
    if text == gold:
        return True
    try:
        return float(text) == float(gold)
    except ValueError:
        return False


@dataclass(frozen=True)
class Truth:
    """The errors of one dirty table: unit -> type, plus what grading a table needs."""

    key: str
    errors: Mapping[Unit, str]
    columns: tuple[str, ...]  # gold's columns, in the dirty table's names
    gold: Mapping[str, Mapping[str, str]]  # row id -> column -> gold text

    @property
    def count(self) -> int:
        return len(self.errors)

    @property
    def units(self) -> int:
        """Units a claim can name: every gold row's cells plus each row gold lacks."""
        extra = sum(1 for _, column in self.errors if column == ROW)
        return len(self.gold) * len(self.columns) + extra

    def categories(self) -> frozenset[str]:
        return frozenset(self.errors.values())

    def unit_of(self, row_id: Any, column: str | None) -> Unit:
        """The unit a claim names: a row gold lacks is one unit, whatever column is named."""
        row = key_text(row_id) or ""
        if column is None or row not in self.gold:
            return (row, ROW)
        return (row, column)

    def remaining(self, snapshot: Snapshot) -> int:
        """Errors a table still holds: cells whose text differs from gold, rows gold lacks,
        and every cell of a gold row the table lost (so losing a row never costs less than
        the wrong cells it held: dropping rows is no repair)."""
        width = max(1, len(self.columns))
        if self.key not in snapshot.values:
            return len(self.gold) * width
        keys = [key_text(v) for v in snapshot.values[self.key]]
        first: dict[str, int] = {}
        extra = 0
        for position, key in enumerate(keys):
            if key is None or key not in self.gold or key in first:
                extra += 1
            else:
                first[key] = position
        wrong = (len(self.gold) - len(first)) * width  # the cells of lost rows
        for column in self.columns:
            values = snapshot.values.get(column)
            for key, row in first.items():
                if values is None or not same_text(cell_text(values[row]), self.gold[key][column]):
                    wrong += 1
        return wrong + extra


def from_tables(
    dirty: pd.DataFrame,
    gold: pd.DataFrame,
    key: str,
    planted: Mapping[Unit, str] | None = None,
    columns: Mapping[str, str] | None = None,
) -> Truth:
    """The truth of a dirty/gold pair whose rows share `key` (gold's keys unique). Columns
    are matched by `columns` (dirty -> gold) when given, else by position when both tables
    have as many, else by name; the dirty names are the ones claims use. `planted` gives
    the types the generator planted."""
    pairs = (
        {key: key, **columns}
        if columns is not None
        else _column_pairs(list(dirty.columns), list(gold.columns))
    )
    if key not in pairs:
        raise ValueError(f"the key column {key!r} has no counterpart in the clean table")
    mapping = {d: g for d, g in pairs.items() if d != key}
    gold_rows = _gold_rows(gold, pairs[key], mapping)
    dirty_snapshot = Snapshot.of(dirty)
    profiles = {c: GoldColumn.of([row[c] for row in gold_rows.values()]) for c in mapping}
    errors: dict[Unit, str] = {}
    seen: set[str] = set()
    for position, value in enumerate(dirty_snapshot.values[key]):
        row = key_text(value) or ""
        if row not in gold_rows or row in seen:
            errors[(row, ROW)] = "duplicate_row"
            continue
        seen.add(row)
        for column in mapping:
            text = cell_text(dirty_snapshot.values[column][position])
            wanted = gold_rows[row][column]
            if not same_text(text, wanted):
                unit = (row, column)
                errors[unit] = (planted or {}).get(unit) or classify(text, wanted, profiles[column])
    return Truth(key, errors, tuple(mapping), gold_rows)


def _column_pairs(dirty: list[str], gold: list[str]) -> dict[str, str]:
    """Dirty column -> gold column: by position when the counts agree, else by name."""
    if len(dirty) == len(gold):
        return dict(zip(dirty, gold, strict=True))
    return {c: c for c in dirty if c in gold}


def _gold_rows(gold: pd.DataFrame, key: str, mapping: dict[str, str]) -> dict[str, dict[str, str]]:
    snapshot = Snapshot.of(gold)
    rows: dict[str, dict[str, str]] = {}
    for position, value in enumerate(snapshot.values[key]):
        row = key_text(value)
        if row is None or row in rows:
            raise ValueError(f"the key column {key!r} of the clean table must be unique")
        rows[row] = {d: cell_text(snapshot.values[g][position]) for d, g in mapping.items()}
    return rows


@dataclass(frozen=True)
class GoldColumn:
    """What `classify` needs of a gold column: its distinct texts and numeric range."""

    texts: frozenset[str]
    low: float | None
    high: float | None
    numeric: bool

    @classmethod
    def of(cls, texts: Sequence[str]) -> GoldColumn:
        present = [t for t in texts if t]
        numbers = [n for n in (parse_number(t) for t in present) if n is not None]
        numeric = bool(present) and len(numbers) == len(present)
        low = min(numbers) if numeric else None
        high = max(numbers) if numeric else None
        return cls(frozenset(present), low, high, numeric)


def _shape(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def classify(dirty: str, gold: str, column: GoldColumn) -> str:
    """The type of one differing cell, read from its dirty and gold texts (for tables that
    come without planted types). The first rule that applies wins:
    missing (dirty empty or a null token) > wrong_type (gold a number, dirty not) >
    out_of_range (a number outside gold's range of that column) > bad_format (equal once case
    and punctuation are ignored) > not_in_domain (gold's column has few distinct values and
    dirty is not one of them) > inconsistent."""
    if dirty.strip().lower() in NULL_TOKENS:
        return "missing"
    if column.numeric and gold:
        number = parse_number(dirty)
        if number is None:
            return "wrong_type"
        if (
            column.low is not None
            and column.high is not None
            and not (column.low <= number <= column.high)
        ):
            return "out_of_range"
    if _shape(dirty) == _shape(gold):
        return "bad_format"
    if not column.numeric and len(column.texts) <= DOMAIN_VALUES and dirty not in column.texts:
        return "not_in_domain"
    return "inconsistent"
