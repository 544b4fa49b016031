"""What the agent sees of its table: shape, types, missing counts, a few rows. Never gold."""

from __future__ import annotations

from collections import Counter
from typing import Any

from dataclean_env.schemas import DatasetInfo
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import json_cell

SAMPLE_ROWS = 5


def duplicate_count(snapshot: Snapshot) -> int:
    """Rows that repeat an earlier one (what `sum(snapshot.duplicate_mask())` counts).
    Only rows whose first-column value repeats can be duplicates, so whole rows are hashed
    for those alone: on a keyed table of 10,000 rows that is none."""
    if not snapshot.columns:
        return max(0, snapshot.n_rows - 1)
    first = snapshot.values[snapshot.columns[0]]
    counts = Counter(first)
    if len(counts) == len(first):
        return 0
    candidates = [i for i, value in enumerate(first) if counts[value] > 1]
    columns = [snapshot.values[c] for c in snapshot.columns]
    return len(candidates) - len({tuple(column[i] for column in columns) for i in candidates})


def table_summary(snapshot: Snapshot, window: tuple[int, int] = (0, SAMPLE_ROWS)) -> dict[str, Any]:
    """The table-dependent fields of an observation, computed once per table version.
    `window` is the (first row, count) the sample shows; `show_rows` moves it."""
    missing = snapshot.missing_counts()
    columns = list(snapshot.columns)
    duplicates = duplicate_count(snapshot)
    first = min(window[0], snapshot.n_rows)
    last = min(first + window[1], snapshot.n_rows)
    sample = [{c: json_cell(snapshot.values[c][i]) for c in columns} for i in range(first, last)]
    return {
        "dataset_info": DatasetInfo.model_construct(
            total_rows=snapshot.n_rows,
            total_columns=len(columns),
            has_duplicates=duplicates > 0,
            has_missing=any(missing.values()),
        ),
        "columns": columns,
        "shape": [snapshot.n_rows, len(columns)],
        "missing_values": missing,
        "dtypes": dict(snapshot.dtype_names),
        "duplicate_count": duplicates,
        "sample_rows": sample,
        "sample_offset": first,
    }
