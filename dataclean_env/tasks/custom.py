"""Bring your own dataset: a folder with dirty.csv and clean.csv (or gold.csv) is a task.

Task folders are the sub-folders of `datasets/` that task_metadata.json does not claim, and
the sub-folders of every folder listed in EXTRA_DATASETS (separated like PATH). The task is
named after its folder. An optional task.json gives `description`, `key` (the column that
identifies a row), `operations` (allowed), `max_steps` (default: `repair_budget`, enough
for the reference repair and for `set_cells` to rewrite every wrong cell), `difficulty`, `columns` (dirty
header -> clean header, when the files' columns cannot be matched by position), `types`
(clean column -> int, float, bool, datetime or str: typed columns) and `grade_headers`.

Both CSVs are read as text with only empty cells as missing, so the agent sees the file as
written (tokens like "N/A", leading zeros, "64" in a column with gaps) and the grader
compares against the clean file's text (`grading/cell_repair.py`). Without a key, rows are
aligned by position (the two files must then have the same number of rows) through a
`row_id` column added to both. The key column is protected.
A folder that cannot be a task is reported (logged, and listed in `problems`) and skipped;
it never stops the server.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dataclean_env.errors import EnvError
from dataclean_env.grading.cell_repair import WEIGHTS, CellRepairGrader
from dataclean_env.operations import canonical_name
from dataclean_env.operations.claims import cleaning_operation_names
from dataclean_env.operations.registry import CLAIM_OPERATIONS
from dataclean_env.table.values import Kind, parse_number
from dataclean_env.tasks.registry import Task, TaskSpec, shuffled
from dataclean_env.tasks.repair_plan import DEFAULT_MAX_STEPS, reference_plan, repair_budget

log = logging.getLogger(__name__)

GOLD_FILES = ("clean.csv", "gold.csv")
ROW_ID = "row_id"
MAX_ROWS = 100_000
LABELLED_SUFFIX = "-labelled"
LABEL_BUDGET = 20  # tuples: the standard budget of Raha and Baran's evaluations
_TASK_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class TaskFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str | None = None
    key: str | None = None
    operations: list[str] | None = Field(default=None, min_length=1)
    max_steps: int | None = Field(default=None, ge=1, le=1000)  # None: repair_budget
    difficulty: str = Field(default="custom", min_length=1, max_length=32)
    columns: dict[str, str] | None = None  # dirty header -> clean header
    types: dict[str, Literal["int", "float", "bool", "datetime", "str"]] = Field(
        default_factory=dict
    )
    grade_headers: bool = False
    # Extra task kinds made from this folder ("detection", "standardisation", "audit"):
    # see tasks/claim_families.py. The cleaning task is always made.
    kinds: list[Literal["detection", "standardisation", "audit"]] = Field(default_factory=list)


class NotATask(ValueError):
    """Why a folder cannot be a task."""


def read_csv(path: Path) -> pd.DataFrame:
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise NotATask(f"{path.name} cannot be read as CSV: {exc}") from None
    if table.empty or table.shape[1] == 0:
        raise NotATask(f"{path.name} has no rows")
    if len(table) > MAX_ROWS:
        raise NotATask(f"{path.name} has {len(table)} rows; at most {MAX_ROWS} are served")
    if any(str(c).startswith("Unnamed:") for c in table.columns):
        raise NotATask(f"{path.name} has a column without a header")
    return table


def read_pair(folder: Path) -> tuple[TaskFile, pd.DataFrame, pd.DataFrame, Path]:
    """(task.json, dirty table, clean table, the clean file's path) of a task folder."""
    gold_path = next((folder / n for n in GOLD_FILES if (folder / n).is_file()), None)
    if not (folder / "dirty.csv").is_file() or gold_path is None:
        raise NotATask("needs dirty.csv and clean.csv (or gold.csv)")
    return task_file(folder), read_csv(folder / "dirty.csv"), read_csv(gold_path), gold_path


def load_custom_task(
    folder: Path,
) -> tuple[TaskSpec, pd.DataFrame, CellRepairGrader, tuple[dict[str, Any], ...]]:
    """The folder's task: its spec, dirty table, grader and reference plan."""
    if not _TASK_ID.match(folder.name):
        raise NotATask(
            "the folder name must be letters, digits, '.', '_' or '-' (it is the task id)"
        )
    config, dirty, gold, gold_path = read_pair(folder)
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
        table[key] = _as_keys(table[key])
    column_map = _column_map(config, dirty, gold, gold_path.name, key)
    unknown = sorted(set(config.types) - set(gold.columns))
    if unknown:
        raise NotATask(f"task.json types names columns {gold_path.name} lacks: {unknown}")
    types = {column: Kind(kind) for column, kind in config.types.items()}
    try:
        grader = CellRepairGrader(
            dirty, gold, key, column_map, types, grade_headers=config.grade_headers
        )
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
    schema = {c: (Kind.INT if c == key else types.get(c, Kind.STR)) for c in gold.columns}
    plan = reference_plan(dirty, gold, key, column_map, operations)
    description = config.description or _describe(schema, key)
    max_steps = config.max_steps or repair_budget(grader.dirty_errors, len(plan))
    if len(plan) > max_steps:
        # The oracle cannot reach gold here: say so rather than let its score mislead.
        description += (
            f" Its reference repair takes {len(plan)} steps, more than the {max_steps} allowed."
        )
    elif max_steps > DEFAULT_MAX_STEPS and config.max_steps is None:
        description += (
            f" The step budget, {max_steps}, is computed from the table: it grows with the "
            f"cells that need repair."
        )
    spec = TaskSpec(
        task_id=folder.name,
        family="custom",
        difficulty=config.difficulty,
        description=description,
        max_steps=max_steps,
        operations=operations,
        scoring=dict(WEIGHTS),
        target_schema=schema,
        cells=dirty.size,
        protected_columns=frozenset({key}),
    )
    return spec, dirty, grader, plan


def _as_keys(column: pd.Series) -> pd.Series:
    """Whole-number keys as integers (row ids an agent types), any other key as text."""
    numbers = [parse_number(v) for v in column]
    whole = [int(n) for n in numbers if n is not None and n.is_integer()]
    if len(whole) == len(numbers):
        return pd.Series(whole, index=column.index, dtype="int64")
    return column


def _column_map(
    config: TaskFile, dirty: pd.DataFrame, gold: pd.DataFrame, gold_name: str, key: str
) -> dict[str, str]:
    """Dirty header -> clean header: task.json's `columns`, else by position."""
    if config.columns is not None:
        wrong = sorted(set(config.columns) - set(dirty.columns))
        wrong += sorted(set(config.columns.values()) - set(gold.columns))
        if wrong:
            raise NotATask(f"task.json columns names columns the files lack: {wrong}")
        return {key: key, **config.columns}
    if len(dirty.columns) != len(gold.columns):
        raise NotATask(
            f"dirty.csv has {len(dirty.columns)} columns and {gold_name} {len(gold.columns)}: "
            f"give task.json a `columns` map (dirty header -> clean header)"
        )
    column_map = dict(zip(dirty.columns, gold.columns, strict=True))
    if column_map[key] != key:
        raise NotATask(f"the key column {key!r} is not at the same position in both files")
    return column_map


def task_file(folder: Path) -> TaskFile:
    path = folder / "task.json"
    if not path.is_file():
        return TaskFile()
    try:
        return TaskFile.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as exc:
        raise NotATask(f"task.json is not valid: {exc}") from None


def _describe(schema: dict[str, Kind], key: str) -> str:
    typed = [f"{c} {k}" for c, k in schema.items() if k != Kind.STR and c != key]
    return (
        f"Repair the cells of this table that differ from its hidden clean version. Rows are "
        f"identified by {key!r} (protected). Cells are compared as text; headers do not "
        f"count. Scored by net repair: a wrong change costs what a right one earns."
        + (f" Typed columns: {', '.join(typed)}." if typed else "")
    )


@dataclass(frozen=True)
class _Loaded:
    spec: TaskSpec
    dirty: pd.DataFrame
    grader: CellRepairGrader
    reference_plan: tuple[dict[str, Any], ...]


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
                    spec, dirty, grader, plan = load_custom_task(folder)
                except NotATask as exc:
                    self._problem(folder, str(exc))
                    continue
                names.add(folder.name)
                self.tasks[folder.name] = _Loaded(spec, dirty, grader, plan)
                labelled = labelled_variant(spec)
                if labelled.task_id not in names:
                    names.add(labelled.task_id)
                    self.tasks[labelled.task_id] = _Loaded(labelled, dirty, grader, plan)

    def _problem(self, path: Path, reason: str) -> None:
        message = f"{path}: {reason}; skipped"
        log.warning("custom dataset %s", message)
        self.problems.append(message)

    def specs(self) -> list[TaskSpec]:
        return [task.spec for task in self.tasks.values()]

    def make(self, task_id: str, seed: int | None, split: str = "train") -> Task:
        loaded = self.tasks[task_id]
        if seed is None:
            # The table as loaded: one Task, so every reset of it shares its opening (the
            # registry keeps small tasks itself; a large table's opening is read once here).
            return self._unshuffled(task_id)
        dirty = shuffled(loaded.dirty, seed)
        return Task(loaded.spec, dirty, loaded.grader, seed, reference_plan=loaded.reference_plan)

    @cache  # noqa: B019  (one entry per loaded task, kept as long as the family)
    def _unshuffled(self, task_id: str) -> Task:
        loaded = self.tasks[task_id]
        return Task(
            loaded.spec, loaded.dirty, loaded.grader, None, reference_plan=loaded.reference_plan
        )


def labelled_variant(spec: TaskSpec) -> TaskSpec:
    """The table's labelled variant: the same task with `label` and a budget of
    LABEL_BUDGET tuples (the Raha/Baran protocol), under the id plus LABELLED_SUFFIX."""
    return replace(
        spec,
        task_id=spec.task_id + LABELLED_SUFFIX,
        operations=(*spec.operations, "label"),
        label_budget=LABEL_BUDGET,
        description=spec.description
        + f" You may label up to {LABEL_BUDGET} rows: `label` shows their clean values.",
    )
