"""Profile-based error detection for the heuristic agent: what it can find without gold.

It reads only the rows the agent has paged through and the task description. Each column
is profiled (missing tokens, the share of numbers and ISO dates, the dominant value shape
and casing, the frequent values), and a cell is flagged when it breaks its column's
profile or a stated limit; rows equal on every column but the key are duplicates (the
later id is the copy); a column that mostly follows from another (city -> country) flags
the rows that disagree. It errs on the side of flagging little: a claim it cannot back
with the profile is not made.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dataclean_env.grading.truth import NULL_TOKENS
from dataclean_env.operations.formats import eu_number_steps

Row = Mapping[str, Any]
Found = dict[tuple[Any, str | None], str]  # (row id, column or None for the row) -> type
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SLASHED = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_RANGE = re.compile(r"\bfrom (-?[\d,]+) to (-?[\d,]+)")
_ALIAS = re.compile(r"'([^']+)' means '([^']+)'")
MAJORITY = 0.8
RARE_MISSING = 0.1  # at most this share of a column empty: its empty cells are flagged


def text(value: Any) -> str:
    return "" if value is None or value == "NULL" else str(value).strip()


def shape(value: str) -> str:
    """Digits 9, letters a (case kept apart: A), runs collapsed: '(555) 123-4567' -> '(9) 9-9'."""
    out = re.sub(r"[0-9]+", "9", value)
    out = re.sub(r"[a-z]+", "a", out)
    return re.sub(r"[A-Z]+", "A", out)


def limits(description: str) -> dict[str, tuple[float, float]]:
    """Column -> (low, high) from phrases like 'age a whole number from 18 to 70'."""
    found = {}
    for clause in re.split(r"[;:.]\s", description):
        words = clause.split()
        match = _RANGE.search(clause)
        if words and match:
            low, high = (float(g.replace(",", "")) for g in match.groups())
            found[words[0]] = (low, high)
    return found


@dataclass
class Column:
    name: str
    values: list[str]  # one per row, "" when missing

    @property
    def present(self) -> list[str]:
        return [v for v in self.values if v.lower() not in NULL_TOKENS]

    def share(self, test: Any) -> float:
        present = self.present
        return sum(1 for v in present if test(v)) / len(present) if present else 0.0


def find_errors(rows: Sequence[Row], key: str, description: str) -> Found:
    """The cells (and rows) that break their column's profile, with a guessed type."""
    if not rows:
        return {}
    columns = [c for c in rows[0] if c != key]
    ids = [row[key] for row in rows]
    bounds = limits(description)
    complete = "no value is missing" in description.lower()
    found: Found = {}
    for name in columns:
        profile = Column(name, [text(row.get(name)) for row in rows])
        # Empty cells are errors where the card says so, or where they are rare: a column
        # often empty in its own right (an optional field) is left alone.
        rare = len(profile.present) >= (1 - RARE_MISSING) * len(profile.values)
        for row_id, kind in _column_errors(profile, bounds.get(name), complete or rare).items():
            found[(ids[row_id], name)] = kind
    for (row, column), kind in _dependency_errors(rows, columns, ids).items():
        found.setdefault((row, column), kind)
    for row_id in _duplicates(rows, columns, ids):
        for column in columns:
            found.pop((row_id, column), None)
        found[(row_id, None)] = "duplicate_row"
    return found


def _column_errors(
    column: Column, bound: tuple[float, float] | None, flag_missing: bool
) -> dict[int, str]:
    errors: dict[int, str] = {}
    numeric = column.share(lambda v: bool(_NUMBER.match(v.replace(",", "")))) >= MAJORITY
    dates = column.share(lambda v: bool(_ISO.match(v))) >= MAJORITY
    shapes = Counter(shape(v) for v in column.present)
    top_shape, top_count = shapes.most_common(1)[0] if shapes else ("", 0)
    counts = Counter(column.present)
    frequent = {v for v, n in counts.items() if n >= 2}
    domain = len(counts) <= max(12, len(column.values) // 8) and frequent
    year_bound = bound if dates else None
    for i, value in enumerate(column.values):
        if value.lower() in NULL_TOKENS:
            if flag_missing:
                errors[i] = "missing"
        elif numeric:
            plain = value.replace(",", "")
            if not _NUMBER.match(plain):
                errors[i] = "wrong_type"
            elif bound and not bound[0] <= float(plain) <= bound[1]:
                errors[i] = "out_of_range"
        elif dates:
            if _ISO.match(value):
                if year_bound and not year_bound[0] <= int(value[:4]) <= year_bound[1]:
                    errors[i] = "out_of_range"
            elif _SLASHED.match(value) or _as_date(value):
                errors[i] = "bad_format"
            else:
                errors[i] = "wrong_type"
        elif domain and value not in frequent:
            lowered = {f.lower(): f for f in frequent}
            errors[i] = "bad_format" if value.lower() in lowered else "not_in_domain"
        elif top_count >= MAJORITY * len(column.present) and shape(value) != top_shape:
            errors[i] = "bad_format"
    return errors


def _as_date(value: str) -> dt.date | None:
    for pattern in ("%d %b %Y", "%b %d %Y", "%d %B %Y"):
        try:
            return dt.datetime.strptime(value, pattern).date()
        except ValueError:
            continue
    return None


def _dependency_errors(rows: Sequence[Row], columns: list[str], ids: list[Any]) -> Found:
    """Where column b mostly follows from column a (each a value has one b in at least 80%
    of its rows, and b has fewer values than a), the rows whose b disagrees."""
    found: Found = {}
    values = {c: [text(row.get(c)) for row in rows] for c in columns}
    distinct = {c: len(set(values[c])) for c in columns}
    for a in columns:
        for b in columns:
            if a == b or not 1 < distinct[b] < distinct[a] <= max(12, len(rows) // 4):
                continue
            groups: dict[str, Counter[Any]] = defaultdict(Counter[Any])
            for x, y in zip(values[a], values[b], strict=True):
                groups[x][y] += 1
            agreeing = sum(g.most_common(1)[0][1] for g in groups.values())
            if agreeing < 0.9 * len(rows):
                continue
            common = Counter(values[b])
            for i, (x, y) in enumerate(zip(values[a], values[b], strict=True)):
                majority = groups[x].most_common(1)[0][0]
                if y != majority and common[y] >= 2 and groups[x][majority] >= 2:
                    found[(ids[i], b)] = "inconsistent"
    return found


def _duplicates(rows: Sequence[Row], columns: list[str], ids: list[Any]) -> list[Any]:
    """Ids of rows equal to a row with a smaller id on every column but the key."""
    first: dict[tuple[Any, ...], Any] = {}
    copies = []
    for row_id, row in sorted(zip(ids, rows, strict=True), key=lambda pair: _order(pair[0])):
        signature = tuple(text(row.get(c)) for c in columns)
        if signature in first:
            copies.append(row_id)
        else:
            first[signature] = row_id
    return copies


def _order(row_id: Any) -> tuple[int, Any]:
    return (0, row_id) if isinstance(row_id, int | float) else (1, str(row_id))


# ── repairs the heuristic trusts ────────────────────────────────────────────
def repairs(rows: Sequence[Row], key: str, found: Found) -> list[dict[str, Any]]:
    """set_cell / drop_rows actions for the flagged cells whose right value the profile
    shows: a case variant or near spelling of a frequent value, the majority country of a
    city, a slashed date whose order is unambiguous; duplicates are dropped."""
    by_id = {row[key]: row for row in rows}
    columns = [c for c in rows[0] if c != key] if rows else []
    frequent = {
        c: [v for v, n in Counter(text(r.get(c)) for r in rows).most_common() if n >= 2 and v]
        for c in columns
    }
    actions, dropped = [], []
    for (row_id, column), kind in sorted(found.items(), key=lambda item: str(item[0])):
        if column is None:
            dropped.append(row_id)
            continue
        value = text(by_id[row_id].get(column))
        fixed = _repair(value, kind, frequent[column])
        if fixed is not None and fixed != value:
            actions.append(
                {
                    "operation": "set_cell",
                    "parameters": {"row_id": row_id, "column": column, "value": fixed},
                }
            )
    if dropped:
        actions.append({"operation": "drop_rows", "parameters": {"row_ids": dropped}})
    return actions


def _repair(value: str, kind: str, frequent: list[str]) -> str | None:
    if kind in ("bad_format", "not_in_domain") and frequent:
        lowered = {f.lower(): f for f in frequent}
        if value.lower() in lowered:
            return lowered[value.lower()]
        close = difflib.get_close_matches(value, frequent, n=1, cutoff=0.75)
        if close:
            return close[0]
    if kind == "bad_format":
        slashed = _SLASHED.match(value)
        if slashed:
            first, second, year = (int(g) for g in slashed.groups())
            if first > 12 and second <= 12:
                return f"{year}-{second:02d}-{first:02d}"
            if second > 12 and first <= 12:
                return f"{year}-{first:02d}-{second:02d}"
            return None
        day = _as_date(value)
        if day:
            return day.isoformat()
        if "@" in value:
            return value.lower()
        if value.isupper() or value.islower():
            return value.title()
    return None


# ── standardisation ─────────────────────────────────────────────────────────
def transforms(rows: Sequence[Row], key: str, description: str) -> dict[str, list[dict[str, Any]]]:
    """Per column, the registry operations its values and the description call for."""
    aliases = dict(_ALIAS.findall(description))
    out: dict[str, list[dict[str, Any]]] = {}
    for name in (c for c in (rows[0] if rows else {}) if c != key):
        column = Column(name, [text(row.get(name)) for row in rows])
        values = column.present
        if not values:
            continue
        digits = [re.sub(r"\D", "", v) for v in values]
        if sum(1 for v in values if "@" in v) >= MAJORITY * len(values):
            out[name] = [{"operation": "strip"}, {"operation": "lower"}]
        elif sum(1 for d in digits if len(d) in (10, 11)) >= MAJORITY * len(values) and any(
            not _NUMBER.match(v) for v in values
        ):
            out[name] = [{"operation": "phone_us"}]
        elif column.share(lambda v: bool(_ISO.match(v) or _SLASHED.match(v))) >= MAJORITY:
            out[name] = [
                {
                    "operation": "normalize_dates",
                    "parameters": {"convention": _order_of(values, description)},
                }
            ]
        elif column.share(lambda v: "€" in v or "$" in v) >= MAJORITY:
            steps = eu_number_steps(name) if any("€" in v for v in values) else []
            out[name] = [*steps, {"operation": "fix_dtype", "parameters": {"dtype": "float"}}]
        elif any(v in aliases for v in values):
            out[name] = [{"operation": "map", "parameters": {"mapping": aliases}}]
        elif column.share(lambda v: v.strip().title() == v.strip() and " " in v.strip()) >= 0.5:
            out[name] = [{"operation": "strip"}, {"operation": "title"}]
    return out


def _order_of(values: list[str], description: str) -> str:
    """us or eu: from a slashed date whose first or second part is above 12, else from
    what the description says."""
    for value in values:
        found = _SLASHED.match(value)
        if found:
            first, second = int(found.group(1)), int(found.group(2))
            if first > 12:
                return "eu"
            if second > 12:
                return "us"
    return "eu" if "day first" in description.lower() else "us"
