"""The corpus family: real tables with tab-err's errors, one task per table.

`corpus_<table>` serves instances like a generated family: `reset(task_id, seed, split)`
composes a seeded mix of the table's error layers (corpus/instances.py), the same triple
giving the same table on every machine, in train / eval / test splits and a secret split
seeded by HMAC of the server's secret. Every instance is graded like a real table, by net
repair (cell-repair F1 reported) against the clean table's text (grading/cell_repair.py).
Each has a labelled
variant (`corpus_<table>-labelled`, 20 tuples, as tasks/custom.py). Its step budget is
MIN_STEPS, or the instance's reference repair when that is longer.
"""

from __future__ import annotations

import random
from dataclasses import replace
from functools import lru_cache

import pandas as pd

from dataclean_env.corpus import instances
from dataclean_env.corpus.tables import load_card, load_table, table_names
from dataclean_env.errors import InvalidAction
from dataclean_env.generation import SPLITS, instance_rng, secret_rng
from dataclean_env.grading.cell_repair import WEIGHTS, CellRepairGrader
from dataclean_env.operations.claims import cleaning_operation_names
from dataclean_env.table.values import Kind
from dataclean_env.tasks.custom import LABELLED_SUFFIX, labelled_variant
from dataclean_env.tasks.generated import digest_of
from dataclean_env.tasks.registry import Task, TaskSpec
from dataclean_env.tasks.repair_plan import reference_plan

PREFIX = "corpus_"
TASK_IDS = [PREFIX + name for name in table_names()]
GENERATOR_VERSIONS = {task_id: f"{task_id}-v{instances.VERSION}" for task_id in TASK_IDS}
MIN_STEPS = 30
KEY = instances.KEY
# The benchmark suite plays the corpus as one family: a secret instance's table is picked by
# its index (index modulo the tables, so every table is drawn alike), its errors by the
# table's secret stream. Its generator version names every table's (they share VERSION).
SUITE_FAMILY = "corpus"
SUITE_GENERATOR_VERSIONS = {SUITE_FAMILY: f"{SUITE_FAMILY}-v{instances.VERSION}"}


def compose(task_id: str, rng: random.Random) -> instances.Instance:
    return instances.compose(load_table(task_id.removeprefix(PREFIX)), rng)


def describe(task_id: str) -> str:
    return instances.describe(load_card(task_id.removeprefix(PREFIX)))


def generator_digest(task_id: str) -> str:
    """sha256 over seeds `DIGEST_SEEDS` of every split (tasks/generated.py's `digest_of`):
    each instance's tables, description, difficulty and layers."""

    def parts(split: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
        made = compose(task_id, instance_rng(task_id, split, seed))
        return made.dirty, made.clean, [describe(task_id), made.difficulty, repr(made.layers)]

    return digest_of(parts)


@lru_cache(maxsize=64)  # resets of the same instance reuse its tables, grader and plan
def instance(task_id: str, split: str, seed: int) -> Task:
    return _task(task_id, compose(task_id, instance_rng(task_id, split, seed)), seed, split)


def secret_task(task_id: str, secret: bytes, index: int) -> Task:
    """Instance `index` of a table's secret split (`generation.secret_rng`)."""
    return _task(task_id, compose(task_id, secret_rng(secret, task_id, index)), None, "secret")


def suite_table(index: int) -> str:
    """The table (task id) instance `index` of the suite's corpus family is drawn from."""
    return TASK_IDS[index % len(TASK_IDS)]


def secret_suite_task(secret: bytes, index: int) -> Task:
    """Instance `index` of the suite's corpus family: of its table's secret split."""
    return secret_task(suite_table(index), secret, index)


def _task(task_id: str, made: instances.Instance, seed: int | None, split: str) -> Task:
    operations = tuple(cleaning_operation_names())
    identity = {c: c for c in made.clean.columns}
    plan = reference_plan(made.dirty, made.clean, KEY, identity, operations)
    spec = replace(
        table_spec(task_id),
        difficulty=made.difficulty,
        description=describe(task_id),
        max_steps=max(MIN_STEPS, len(plan)),
    )
    grader = CellRepairGrader(made.dirty, made.clean, KEY, identity, {})
    return Task(spec, made.dirty, grader, seed, split, reference_plan=plan)


def table_spec(task_id: str) -> TaskSpec:
    """What /tasks lists for a table, from its card alone (no instance is built)."""
    card = load_card(task_id.removeprefix(PREFIX))
    columns = [KEY, *card["columns"]]
    return TaskSpec(
        task_id=task_id,
        family="corpus",
        difficulty="real",
        description=(
            f"{describe(task_id)} A corpus table ({GENERATOR_VERSIONS[task_id]}): reset with "
            f"a seed (an integer >= 0) and a split ({', '.join(SPLITS)}) to get an instance; "
            f"its step budget is {MIN_STEPS}, or its reference repair's length when longer."
        ),
        max_steps=MIN_STEPS,
        operations=tuple(cleaning_operation_names()),
        scoring=dict(WEIGHTS),
        target_schema={c: Kind.INT if c == KEY else Kind.STR for c in columns},
        cells=card["rows"] * len(columns),
        protected_columns=frozenset({KEY}),
        version=GENERATOR_VERSIONS[task_id],
    )


class CorpusFamily:
    name = "corpus"
    instantiate = (
        'POST /reset/{task_id} with {"seed": n, "split": "train" | "eval" | "test"}: each '
        "(task_id, seed, split) is one reproducible mix of the table's tab-err error layers; "
        "the clean table is the same in every instance. `<task_id>-labelled` offers `label`."
    )

    def specs(self) -> list[TaskSpec]:
        specs = []
        for task_id in TASK_IDS:
            spec = table_spec(task_id)
            specs += [spec, labelled_variant(spec)]
        return specs

    def make(self, task_id: str, seed: int | None, split: str = "train") -> Task:
        if split not in SPLITS:
            raise InvalidAction(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
        table_task = task_id.removesuffix(LABELLED_SUFFIX)
        made = instance(table_task, split, seed or 0)
        spec = labelled_variant(made.spec) if table_task != task_id else made.spec
        # A copy: the cached instance's table is shared by every reset of it.
        return replace(made, spec=spec, dirty=made.dirty.copy())
