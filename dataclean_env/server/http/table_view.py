"""A page of an episode's current table beside the dirty table it started from (for viewers).

The browser page shows every cell, not just the observation's five sample rows, and marks
the cells a step changed. That needs each current row's row in the dirty table:

* with a key column (generated and custom tasks protect one), rows are matched by key
  (the copies of a near-duplicate record in order, each to its closest dirty copy);
* without one (the fixed tasks), rows are matched by an alignment: operations only drop
  rows or rewrite cells, never reorder or add them, so the current rows are an ordered
  subsequence of the dirty rows, and the alignment with the fewest differing cells is found
  by dynamic programming (tables of up to a few hundred rows; bigger ones fall back to
  position).

Columns are matched by position while the table has as many columns as the dirty one
(renames keep positions), else by name. Only the current and the dirty table are read: the
view never sees gold.
"""

from __future__ import annotations

from typing import Any

from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import MISSING, json_cell

MAX_PAGE = 200
# Above this many (current x dirty) row pairs the alignment would cost too much per view.
MAX_ALIGNMENT = 40_000


def cell(value: Any) -> Any:
    """A cell for JSON: missing is null (not the observation's "NULL" text, which a real
    cell may also hold)."""
    return None if value is MISSING else json_cell(value)


def column_stats(snapshot: Snapshot) -> list[dict[str, Any]]:
    """Per column: name, dtype, missing count and distinct count of present values."""
    stats = []
    for name in snapshot.columns:
        values = snapshot.values[name]
        present = [v for v in values if v is not MISSING]
        stats.append(
            {
                "name": name,
                "dtype": snapshot.dtype_names[name],
                "missing": len(values) - len(present),
                "distinct": len({_hashable(v) for v in present}),
            }
        )
    return stats


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def column_origins(current: Snapshot, dirty: Snapshot) -> list[str | None]:
    """For each current column, the dirty column it came from (None if none)."""
    if len(current.columns) == len(dirty.columns):
        return list(dirty.columns)
    return [c if c in dirty.values else None for c in current.columns]


def row_origins(current: Snapshot, dirty: Snapshot, key: str | None) -> list[int | None]:
    """For each current row, the position of its dirty row (None if none)."""
    origins = column_origins(current, dirty)
    if key is not None and key in current.values and key in dirty.values:
        return _by_key(current, dirty, key, origins)
    n, m = current.n_rows, dirty.n_rows
    if n > m or n * m > MAX_ALIGNMENT:
        return [i if i < m else None for i in range(n)]
    return _align(current, dirty, origins)


def _by_key(
    current: Snapshot, dirty: Snapshot, key: str, origins: list[str | None]
) -> list[int | None]:
    """Rows matched by key. A key that several dirty rows share (near duplicates) is matched
    in order, each current row to the closest of the group's dirty rows after the one its
    previous copy matched."""
    groups: dict[Any, list[int]] = {}
    for position, value in enumerate(dirty.values[key]):
        groups.setdefault(_hashable(value), []).append(position)
    pairs = _column_pairs(current, dirty, origins)
    used: dict[Any, int] = {}  # key -> index in its group after the last match
    matched: list[int | None] = []
    for i, value in enumerate(current.values[key]):
        k = _hashable(value)
        group = groups.get(k, [])
        start = used.get(k, 0)
        if len(group) - start <= 1:
            matched.append(group[start] if start < len(group) else None)
            used[k] = start + 1
            continue
        costs = [(_cost(pairs, i, j), n) for n, j in enumerate(group[start:], start)]
        _, best = min(costs)
        matched.append(group[best])
        used[k] = best + 1
    return matched


def _column_pairs(
    current: Snapshot, dirty: Snapshot, origins: list[str | None]
) -> list[tuple[list[Any], list[Any]]]:
    return [
        (current.values[c], dirty.values[o])
        for c, o in zip(current.columns, origins, strict=True)
        if o is not None
    ]


def _cost(pairs: list[tuple[list[Any], list[Any]]], i: int, j: int) -> int:
    return sum(1 for now, was in pairs if not _same(now[i], was[j]))


def _align(current: Snapshot, dirty: Snapshot, origins: list[str | None]) -> list[int | None]:
    """The order-preserving matching of every current row to a distinct dirty row with the
    fewest differing cells (ties: the earliest dirty rows)."""
    pairs = _column_pairs(current, dirty, origins)
    n, m = current.n_rows, dirty.n_rows

    inf = float("inf")
    # best[i][j]: least cost of matching the first i current rows within the first j dirty rows.
    best = [[0.0] * (m + 1)] + [[inf] * (m + 1) for _ in range(n)]
    for i in range(1, n + 1):
        row, above = best[i], best[i - 1]
        for j in range(i, m + 1):
            row[j] = min(row[j - 1], above[j - 1] + _cost(pairs, i - 1, j - 1))
    matched: list[int | None] = [None] * n
    i, j = n, m
    while i > 0:
        if best[i][j] == best[i][j - 1] and j - 1 >= i:
            j -= 1  # dirty row j-1 was dropped
        else:
            matched[i - 1] = j - 1
            i, j = i - 1, j - 1
    return matched


def _same(now: Any, was: Any) -> bool:
    if now is MISSING or was is MISSING:
        return now is was
    same: bool = (type(now) is type(was) and now == was) or cell(now) == cell(was)
    return same


def table_page(
    current: Snapshot, dirty: Snapshot, key: str | None, offset: int, limit: int
) -> dict[str, Any]:
    """Rows [offset, offset + limit) of the current table: their cells (null when missing)
    and, per row, the dirty value of every cell that differs from where the row started
    (`changed`: column -> dirty value; `new` rows have no dirty row)."""
    limit = max(0, min(limit, MAX_PAGE))
    offset = max(0, offset)
    last = min(offset + limit, current.n_rows)
    origins = column_origins(current, dirty)
    rows_from = row_origins(current, dirty, key)
    rows = []
    for i in range(offset, last):
        was_row = rows_from[i]
        changed: dict[str, Any] = {}
        for column, origin in zip(current.columns, origins, strict=True):
            now = current.values[column][i]
            if was_row is None or origin is None:
                continue
            was = dirty.values[origin][was_row]
            if not _same(now, was):
                changed[column] = cell(was)
        rows.append(
            {
                "position": i,
                "cells": [cell(current.values[c][i]) for c in current.columns],
                "changed": changed,
                "new": was_row is None,
            }
        )
    return {
        "columns": column_stats(current),
        "key": key if key in current.values else None,
        "total_rows": current.n_rows,
        "dirty_rows": dirty.n_rows,
        "offset": offset,
        "limit": limit,
        "rows": rows,
    }
