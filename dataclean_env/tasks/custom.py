"""Bring your own dataset: a folder with dirty.csv and clean.csv (or gold.csv) is a task.

Task folders are the sub-folders of `datasets/` that task_metadata.json does not claim, and
the sub-folders of every folder listed in EXTRA_DATASETS (separated like PATH). The task is
named after its folder. An optional task.json gives `description`, `key` (the column that
identifies a row), `operations` (allowed) and `max_steps`.

Both CSVs are read with only empty cells as missing, so tokens like "N/A" stay visible to
the agent. Without a key, rows are aligned by position (the two files must then have the
same number of rows) through a `row_id` column added to both. The key column is protected.
A folder that cannot be a task is reported (logged, and listed in `problems`) and skipped;
it never stops the server.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dataclean_env.errors import EnvError
from dataclean_env.grading.preservation import WEIGHTS, PreservationGrader
from dataclean_env.operations import canonical_name, operation_names
from dataclean_env.operations.claims import CLAIM_OPERATIONS
from dataclean_env.tasks.registry import Task, TaskSpec, shuffled
from dataclean_env.values import kind_of

log = logging.getLogger(__name__)

GOLD_FILES = ("clean.csv", "gold.csv")
ROW_ID = "row_id"
MAX_ROWS = 100_000
_TASK_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class TaskFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str | None = None
    key: str | None = None
    operations: list[str] | None = Field(default=None, min_length=1)
    max_steps: int = Field(default=30, ge=1, le=1000)
    # Extra task kinds made from this folder ("detection", "standardisation", "audit"):
    # see tasks/claims.py. The cleaning task is always made.
    kinds: list[Literal["detection", "standardisation", "audit"]] = Field(default_factory=list)


class NotATask(ValueError):
    """Why a folder cannot be a task."""


def read_csv(path: Path) -> pd.DataFrame:
    try:
        table = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise NotATask(f"{path.name} cannot be read as CSV: {exc}") from None
    if table.empty or table.shape[1] == 0:
        raise NotATask(f"{path.name} has no rows")
    if len(table) > MAX_ROWS:
        raise NotATask(f"{path.name} has {len(table)} rows; at most {MAX_ROWS} are served")
    if any(str(c).startswith("Unnamed:") for c in table.columns):
        raise NotATask(f"{path.name} has a column without a header")
    return table


def load_custom_task(folder: Path) -> tuple[TaskSpec, pd.DataFrame, PreservationGrader]:
    if not _TASK_ID.match(folder.name):
        raise NotATask(
            "the folder name must be letters, digits, '.', '_' or '-' (it is the task id)"
        )
    gold_path = next((folder / n for n in GOLD_FILES if (folder / n).is_file()), None)
    if not (folder / "dirty.csv").is_file() or gold_path is None:
        raise NotATask("needs dirty.csv and clean.csv (or gold.csv)")
    config = task_file(folder)
    dirty, gold = read_csv(folder / "dirty.csv"), read_csv(gold_path)
    key = config.key
    if key is None:
        if len(dirty) != len(gold):
            raise NotATask(
                f"without a key in task.json the rows are matched by position, but dirty.csv "
                f"has {len(dirty)} rows and {gold_path.name} {len(gold)}"
            )
        dirty.insert(0, ROW_ID, range(1, len(dirty) + 1))
        gold.insert(0, ROW_ID, range(1, len(gold) + 1))
        key = ROW_ID
    for name, table in (("dirty.csv", dirty), (gold_path.name, gold)):
        if key not in table.columns:
            raise NotATask(f"the key column {key!r} is not in {name}")
    try:
        grader = PreservationGrader.for_task(dirty, gold, key)
    except ValueError as exc:
        raise NotATask(str(exc)) from None
    operations = tuple(config.operations or cleaning_operation_names())
    try:
        operations = tuple(dict.fromkeys(canonical_name(name) for name in operations))
    except EnvError as exc:
        raise NotATask(f"task.json: {exc.detail}") from None
    claims = sorted(set(operations) & CLAIM_OPERATIONS)
    if claims:
        raise NotATask(f"task.json: {claims} belong to the claim task kinds (use 'kinds')")
    schema = {c: kind_of(gold[c].dtype) for c in gold.columns}
    spec = TaskSpec(
        task_id=folder.name,
        family="custom",
        difficulty="custom",
        description=config.description or _describe(schema, key),
        max_steps=config.max_steps,
        operations=operations,
        scoring=dict(WEIGHTS),
        target_schema=schema,
        cells=dirty.size,
        protected_columns=frozenset({key}),
    )
    return spec, dirty, grader


def cleaning_operation_names() -> list[str]:
    """Every operation but those of the claim task kinds (which only their kinds allow)."""
    return [name for name in operation_names() if name not in CLAIM_OPERATIONS]


def task_file(folder: Path) -> TaskFile:
    path = folder / "task.json"
    if not path.is_file():
        return TaskFile()
    try:
        return TaskFile.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as exc:
        raise NotATask(f"task.json is not valid: {exc}") from None


def _describe(schema: dict[str, str], key: str) -> str:
    columns = ", ".join(f"{c} {k}" for c, k in schema.items())
    return (
        f"Clean this table so that it matches its hidden clean version. Rows are identified "
        f"by {key!r} (protected). Target columns: {columns}."
    )


@dataclass(frozen=True)
class _Loaded:
    spec: TaskSpec
    dirty: pd.DataFrame
    grader: PreservationGrader


class CustomFamily:
    name = "custom"
    instantiate = (
        "POST /reset/{task_id}: the folder's dirty table (task id = folder name); a seed only "
        "shuffles its rows."
    )

    def __init__(
        self, parents: Iterable[Path], skip: Iterable[Path] = (), taken: Iterable[str] = ()
    ):
        self.tasks: dict[str, _Loaded] = {}
        self.problems: list[str] = []
        skipped = {p.resolve() for p in skip}
        names = set(taken)
        for parent in parents:
            if not parent.is_dir():
                self._problem(parent, "is not a folder")
                continue
            for folder in sorted(p for p in parent.iterdir() if p.is_dir()):
                if folder.resolve() in skipped or folder.name.startswith((".", "_")):
                    continue
                if folder.name in names:
                    self._problem(folder, f"task id {folder.name!r} is already taken")
                    continue
                try:
                    spec, dirty, grader = load_custom_task(folder)
                except NotATask as exc:
                    self._problem(folder, str(exc))
                    continue
                names.add(folder.name)
                self.tasks[folder.name] = _Loaded(spec, dirty, grader)

    def _problem(self, path: Path, reason: str) -> None:
        message = f"{path}: {reason}; skipped"
        log.warning("custom dataset %s", message)
        self.problems.append(message)

    def specs(self) -> list[TaskSpec]:
        return [task.spec for task in self.tasks.values()]

    def make(self, task_id: str, seed: int | None, split: str = "train") -> Task:
        loaded = self.tasks[task_id]
        return Task(loaded.spec, shuffled(loaded.dirty, seed), loaded.grader, seed)
