"""The reference plan of a real or custom table, built from its dirty/clean pair at load.

Per column, a dirty value whose every occurrence has one clean value becomes an entry of
that column's `map`; every other wrong cell (a missing one, or a value that is right in
some rows and wrong in others, as when sources conflict over one entity) becomes a cell
assignment; dirty rows the clean file lacks are dropped. Assignments go in `set_cells`
batches of MAX_CELL_ASSIGNMENTS when the task offers it (else one `set_cell` each); the
other steps are batched into `program`s. Every step's parameters stay under
PLAN_ACTION_BYTES of JSON, so the plan is about as short as the operations and the engine's
limits allow, and `repair_budget` is a step budget it fits. Only the oracle baseline and
the tests replay it; no agent sees it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, TypeVar

import pandas as pd

from dataclean_env.operations.program import MAX_PROGRAM_STEPS
from dataclean_env.operations.rows import MAX_CELL_ASSIGNMENTS, MAX_ROW_IDS

T = TypeVar("T")
MAX_MAPPING = 1000  # entries of one `map` (its parameter model's bound)
# JSON bytes of one step's parameters: under the engine's default action limit (256 KiB).
PLAN_ACTION_BYTES = 200_000
# A task's step budget when neither it nor its repair asks for more (task.json's default),
# and the steps a computed budget leaves beyond the repair.
DEFAULT_MAX_STEPS = 30
BUDGET_SLACK = 10


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
    assignments = [s["parameters"] for s in steps if s["operation"] == "set_cell"]
    others = [s for s in steps if s["operation"] != "set_cell"]
    if "set_cells" not in operations:
        return tuple(_batched(steps, operations))
    return tuple(_batched(others, operations) + _set_cells(assignments))


def repair_budget(errors: int, plan_steps: int) -> int:
    """The step budget of a table with `errors` wrong cells whose reference repair takes
    `plan_steps`: room for `set_cells` alone to rewrite every wrong cell (or for the plan,
    if longer), BUDGET_SLACK steps more, and never less than DEFAULT_MAX_STEPS."""
    needed = max(math.ceil(errors / MAX_CELL_ASSIGNMENTS), plan_steps)
    return max(DEFAULT_MAX_STEPS, needed + BUDGET_SLACK)


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
    chunks = _chunks(sorted(mapping.items()), MAX_MAPPING)
    if len(chunks) > 1:
        # A later `map` step would map again what an earlier one wrote: a value the mapping
        # writes that it also maps is set cell by cell instead.
        mapping = {old: new for old, new in mapping.items() if new not in mapping}
        chunks = _chunks(sorted(mapping.items()), MAX_MAPPING)
    for chunk in chunks:
        steps.append({"operation": "map", "parameters": {"column": column, "mapping": dict(chunk)}})
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
        {"operation": "program", "parameters": {"operations": chunk}}
        for chunk in _chunks(steps, MAX_PROGRAM_STEPS)
    ]


def _set_cells(assignments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`set_cells` steps making every assignment; a cell assigned twice (rows sharing a
    key) keeps its last value, as `set_cell` steps in turn would leave it."""
    last = {(str(a["row_id"]), a["column"]): a for a in assignments}
    return [
        {"operation": "set_cells", "parameters": {"cells": chunk}}
        for chunk in _chunks(list(last.values()), MAX_CELL_ASSIGNMENTS)
    ]


def _chunks(items: list[T], most: int) -> list[list[T]]:
    """`items` in order, in runs of at most `most` whose JSON stays under PLAN_ACTION_BYTES."""
    chunks: list[list[T]] = []
    size = 0
    for item in items:
        item_size = len(json.dumps(item, ensure_ascii=False).encode("utf-8")) + 2
        if not chunks or len(chunks[-1]) == most or size + item_size > PLAN_ACTION_BYTES:
            chunks.append([])
            size = 0
        chunks[-1].append(item)
        size += item_size
    return chunks
