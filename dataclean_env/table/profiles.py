"""Per-column profiles of the current table: what an agent needs to find rules without gold.

A profile counts non-null and distinct values, lists the most frequent values and the most
frequent value shapes (`12/3/2024` has shape `99/9/9999`, `Ab-12` has `Aa-99`), and gives
min/max for numeric and date columns. Everything comes from the agent's own table, never
from gold. Profiles are recomputed only when the table changes, and then only for columns
whose values changed (a snapshot shares the value lists of the columns a step left alone).
"""

from __future__ import annotations

from collections import Counter
from itertools import islice
from operator import itemgetter
from typing import Any

from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import MISSING, Kind, json_cell

TOP_VALUES = 5  # most frequent values listed per column
TOP_SHAPES = 5  # most frequent shapes listed per column
MAX_SHAPE = 24  # longer shapes are cut and end in "…"
MAX_TEXT = 40  # longer top values are cut and end in "…"

# Digits become 9, capitals A, small letters a; every other byte stays as it is. A byte
# table lets one C call shape all distinct values of a column at once.
_SHAPE_BYTES = bytes(
    ord("9")
    if chr(b).isdigit()
    else ord("A")
    if chr(b).isupper()
    else ord("a")
    if chr(b).islower()
    else b
    for b in range(128)
) + bytes(range(128, 256))
_SEPARATOR = "\x00"
_ORDERED_KINDS = frozenset({Kind.INT, Kind.FLOAT, Kind.DATETIME})


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def value_shape(value: Any) -> str:
    """The shape of one value's text: `9/99/9999` for `3/14/2024`, `Aaa` for `Ana`."""
    return _cut(_shapes([str(value)])[0], MAX_SHAPE)


def _shapes(texts: list[str]) -> list[str]:
    """The shapes of many texts, uncut, in one translate over their joined bytes."""
    joined = _SEPARATOR.join(texts)
    if joined.count(_SEPARATOR) != len(texts) - 1:  # a value holds the separator itself
        return [t.encode("utf-8").translate(_SHAPE_BYTES).decode("utf-8") for t in texts]
    return joined.encode("utf-8").translate(_SHAPE_BYTES).decode("utf-8").split(_SEPARATOR)


def _shape_counts(values: list[Any], counts: Counter[Any]) -> list[list[Any]]:
    if len(counts) * 4 < len(values):  # many repeats: shape each distinct value once
        shapes: Counter[str] = Counter()
        for shape, n in zip(_shapes([str(v) for v in counts]), counts.values(), strict=True):
            shapes[shape] += n
    else:  # mostly distinct: shaping every cell lets Counter count in C
        shapes = Counter(_shapes([str(v) for v in values if v is not MISSING]))
    return [[_cut(s, MAX_SHAPE), n] for s, n in _top(shapes, TOP_SHAPES)]


def _shown(value: Any) -> Any:
    cell = json_cell(value)
    return _cut(cell, MAX_TEXT) if isinstance(cell, str) else cell


def _most_common(counts: Counter[Any], present: int) -> list[tuple[Any, int]]:
    # Ties keep their first appearance (most_common sorts stably), so a table has one
    # profile; when every value is unique the first ones are the answer, without a sort.
    if len(counts) == present:
        return [(v, 1) for v in islice(counts, TOP_VALUES)]
    return _top(counts, TOP_VALUES)


def _top(counts: Counter[Any], n: int) -> list[tuple[Any, int]]:
    """`counts.most_common(n)`: heapq.nlargest, which is documented to equal the stable
    sort below; on the few distinct values of a small table the sort is faster."""
    if len(counts) > 4096:
        return counts.most_common(n)
    return sorted(counts.items(), key=itemgetter(1), reverse=True)[:n]


def profile_column(values: list[Any], kind: Kind) -> dict[str, Any]:
    """The profile of one column's values (missing cells are MISSING)."""
    counts = Counter(values)
    missing = counts.pop(MISSING, 0)
    profile: dict[str, Any] = {
        "non_null": len(values) - missing,
        "distinct": len(counts),
        "top_values": [[_shown(v), n] for v, n in _most_common(counts, len(values) - missing)],
    }
    if kind == Kind.STR:
        profile["shapes"] = _shape_counts(values, counts)
    if kind in _ORDERED_KINDS and counts:
        profile["min"] = json_cell(min(counts))
        profile["max"] = json_cell(max(counts))
    return profile


def column_profiles(
    snapshot: Snapshot,
    previous: tuple[Snapshot, dict[str, dict[str, Any]]] | None = None,
) -> dict[str, dict[str, Any]]:
    """A profile per column of `snapshot`. `previous` is an earlier (snapshot, profiles) pair:
    a column whose value list is the very same object, with the same kind, keeps its profile
    (renames and steps that touch other columns cost nothing)."""
    reusable: dict[int, tuple[Kind, dict[str, Any]]] = {}
    if previous is not None:
        old, old_profiles = previous
        for column in old.columns:
            if column in old_profiles:
                values = old.values[column]
                reusable[id(values)] = (old.kinds[column], old_profiles[column])
    profiles = {}
    for column in snapshot.columns:
        values, kind = snapshot.values[column], snapshot.kinds[column]
        kept = reusable.get(id(values))
        profiles[column] = (
            kept[1] if kept is not None and kept[0] == kind else profile_column(values, kind)
        )
    return profiles
