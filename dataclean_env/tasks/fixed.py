"""The fixed task family: dirty/gold CSV pairs under datasets/, described by task_metadata.json.

Each pair is read and graded once at start-up and kept in memory; a reset only copies the
dirty table (shuffling its rows when a seed is given, which the key-aligned grader ignores).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from dataclean_env.grading import Grader, build_facts
from dataclean_env.operations import canonical_name
from dataclean_env.table.values import Kind
from dataclean_env.tasks.registry import Task, TaskSpec, shuffled

METADATA_FILE = "task_metadata.json"


def read_table(path: Path, text_columns: list[str] | None = None) -> pd.DataFrame:
    """A CSV as the episode sees it: `text_columns` are kept as text, as an export would."""
    return pd.read_csv(path, dtype={c: "str" for c in text_columns or []})


def cast_to_schema(table: pd.DataFrame, schema: dict[str, Kind]) -> pd.DataFrame:
    """Gold read from CSV, with the column types the target schema declares."""
    result = table.copy()
    for column, kind in schema.items():
        if kind == Kind.INT:
            result[column] = result[column].astype("int64")
        elif kind == Kind.FLOAT:
            result[column] = result[column].astype("float64")
        elif kind == Kind.BOOL:
            result[column] = result[column].astype(bool)
        elif kind == Kind.DATETIME:
            result[column] = pd.to_datetime(result[column], format="ISO8601")
        else:
            result[column] = result[column].astype("str")
    return result


@dataclass(frozen=True)
class FixedTask:
    spec: TaskSpec
    dirty: pd.DataFrame
    grader: Grader
    reference_plan: tuple[dict[str, Any], ...]


def load_metadata(datasets_dir: Path) -> list[dict[str, Any]]:
    with open(datasets_dir / METADATA_FILE, encoding="utf-8") as handle:
        tasks: list[dict[str, Any]] = json.load(handle)["tasks"]
    return tasks


def load_fixed_task(datasets_dir: Path, entry: dict[str, Any]) -> FixedTask:
    folder = datasets_dir / entry["folder"]
    schema = {column: Kind(kind) for column, kind in entry["target_schema"].items()}
    dirty = read_table(folder / "dirty.csv", entry.get("text_columns"))
    gold = cast_to_schema(read_table(folder / "gold.csv"), schema)
    if list(gold.columns) != list(schema):
        raise ValueError(f"{folder}/gold.csv columns {list(gold.columns)} != target schema")
    operations = tuple(entry["operations_allowed"])
    for name in operations:
        canonical_name(name)  # fails loudly on a typo in the metadata
    spec = TaskSpec(
        task_id=entry["task_id"],
        family="fixed",
        difficulty=entry["difficulty"],
        description=entry["description"],
        max_steps=int(entry["max_steps"]),
        operations=operations,
        scoring=entry["scoring"],
        target_schema=schema,
        cells=dirty.size,
    )
    facts = build_facts(dirty, gold, entry["key_column"], entry.get("header_map"))
    grader = Grader.for_task(facts, spec.scoring, dirty)
    return FixedTask(spec, dirty, grader, tuple(entry.get("solution", ())))


class FixedFamily:
    name = "fixed"
    instantiate = "POST /reset/{task_id}: one fixed table; a seed only shuffles its rows."

    def __init__(self, datasets_dir: Path):
        entries = load_metadata(datasets_dir)
        self.tasks = {entry["task_id"]: load_fixed_task(datasets_dir, entry) for entry in entries}
        self.folders = [datasets_dir / entry["folder"] for entry in entries]

    def specs(self) -> list[TaskSpec]:
        return [task.spec for task in self.tasks.values()]

    def make(self, task_id: str, seed: int | None, split: str = "train") -> Task:
        fixed = self.tasks[task_id]
        return Task(
            fixed.spec,
            shuffled(fixed.dirty, seed),
            fixed.grader,
            seed,
            reference_plan=fixed.reference_plan,
        )
