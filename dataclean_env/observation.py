"""What the agent sees of its table: shape, types, missing counts, a few rows. Never gold."""

from __future__ import annotations

from typing import Any

from dataclean_env.schemas import DatasetInfo
from dataclean_env.snapshot import Snapshot
from dataclean_env.values import json_cell

SAMPLE_ROWS = 5


def table_summary(snapshot: Snapshot, window: tuple[int, int] = (0, SAMPLE_ROWS)) -> dict[str, Any]:
    """The table-dependent fields of an observation, computed once per table version.
    `window` is the (first row, count) the sample shows; `show_rows` moves it."""
    missing = snapshot.missing_counts()
    duplicates = snapshot.duplicate_count()
    columns = list(snapshot.columns)
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
