"""The reference plan of a real or custom table, built from its dirty/clean pair at load.

Per column, a dirty value whose every occurrence has one clean value becomes an entry of
that column's `map`; every other wrong cell (a missing one, or a value that is right in
some rows and wrong in others) becomes a `set_cell`; dirty rows the clean file lacks are
dropped. The steps are batched into `program`s, so the plan is about as short as the
operations allow. Only the oracle baseline and the tests replay it; no agent sees it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from dataclean_env.operations.program import MAX_PROGRAM_STEPS
from dataclean_env.operations.rows import MAX_ROW_IDS

MAX_MAPPING = 1000  # entries of one `map` (its parameter model's bound)


def _text(value: Any) -> str:
    """A CSV cell as the grader reads it: trimmed text, "" when empty."""
    return "" if pd.isna(value) else str(value).strip()


def _key(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def reference_plan(
    dirty: pd.DataFrame,
    gold: pd.DataFrame,
    key: str,
    column_map: Mapping[str, str],
    operations: tuple[str, ...],
) -> tuple[dict[str, Any], ...]:
    """The actions that take `dirty` to `gold` (as text), shortest first: see the module."""
    clean_rows = gold.drop_duplicates(key).set_index(key)
    present = dirty[key].isin(clean_rows.index)
    steps: list[dict[str, Any]] = []
    for column, clean_column in column_map.items():
        if column == key or clean_column not in clean_rows.columns:
            continue
        kept = dirty.loc[present, [key, column]]
        wanted = [_text(v) for v in clean_rows.loc[kept[key], clean_column]]
        steps += _column_steps(column, list(kept[key]), list(kept[column]), wanted, operations)
    extra = sorted({_key(k) for k in dirty.loc[~present, key]}, key=str)
    for start in range(0, len(extra), MAX_ROW_IDS):
        steps.append(
            {
                "operation": "drop_rows",
                "parameters": {"row_ids": extra[start : start + MAX_ROW_IDS]},
            }
        )
    return tuple(_batched(steps, operations))


def _column_steps(
    column: str, keys: list[Any], values: list[Any], wanted: list[str], operations: tuple[str, ...]
) -> list[dict[str, Any]]:
    clean_of: dict[str, set[str]] = {}
    for value, clean in zip(values, wanted, strict=True):
        if not pd.isna(value):
            clean_of.setdefault(str(value), set()).add(clean)
    mapping: dict[str, str] = {}
    if "map" in operations:
        for value, cleans in clean_of.items():
            if len(cleans) == 1 and (clean := next(iter(cleans))) != value.strip():
                mapping[value] = clean
    steps: list[dict[str, Any]] = []
    entries = sorted(mapping.items())
    for start in range(0, len(entries), MAX_MAPPING):
        chunk = dict(entries[start : start + MAX_MAPPING])
        steps.append({"operation": "map", "parameters": {"column": column, "mapping": chunk}})
    for row_key, value, clean in zip(keys, values, wanted, strict=True):
        if _text(value) == clean or (not pd.isna(value) and str(value) in mapping):
            continue
        steps.append(
            {
                "operation": "set_cell",
                "parameters": {"row_id": _key(row_key), "column": column, "value": clean or None},
            }
        )
    return steps


def _batched(steps: list[dict[str, Any]], operations: tuple[str, ...]) -> list[dict[str, Any]]:
    if "program" not in operations or len(steps) <= 1:
        return steps
    return [
        {"operation": "program", "parameters": {"operations": steps[i : i + MAX_PROGRAM_STEPS]}}
        for i in range(0, len(steps), MAX_PROGRAM_STEPS)
    ]
