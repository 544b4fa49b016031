"""Generated task families: unlimited seeded instances in train / eval / test splits.

The task id names the family; `reset(task_id, seed, split)` picks the instance, the same
triple giving the same table, rule card and grader on every machine. Instances are graded
like custom datasets (repair, preservation, row integrity), and the key is protected.

Each family has a generator version (`crm-v2`): the plain task id always serves the current
one, /tasks names it, and a committed digest of a fixed set of instances
(`generation/digests.py`) makes any change to what a seed produces a deliberate version bump.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import lru_cache
from random import Random
from types import ModuleType
from typing import TYPE_CHECKING

from dataclean_env.errors import InvalidAction
from dataclean_env.generation import (
    SPLITS,
    Generated,
    crm,
    fix_types,
    full_pipeline,
    instance_rng,
    inventory,
    normalize_dedupe,
    orders,
    secret_rng,
)
from dataclean_env.generation.noise import pick_difficulty
from dataclean_env.grading.preservation import WEIGHTS, PreservationGrader
from dataclean_env.table.values import kind_of
from dataclean_env.tasks.registry import Task, TaskSpec

if TYPE_CHECKING:
    import pandas as pd

MODULES: dict[str, ModuleType] = {
    "fix_types": fix_types,
    "normalize_dedupe": normalize_dedupe,
    "full_pipeline": full_pipeline,
    "crm": crm,
    "orders": orders,
    "inventory": inventory,
}
FAMILIES: dict[str, Callable[[Random], Generated]] = {
    name: module.generate for name, module in MODULES.items()
}
# family -> its generator version, e.g. "crm-v2"; published numbers name these.
GENERATOR_VERSIONS: dict[str, str] = {
    name: f"{name}-v{module.VERSION}" for name, module in MODULES.items()
}
DIGEST_SEEDS = range(4)  # seeds of every split that a version's digest covers


def generator_digest(task_id: str) -> str:
    """sha256 over the dirty table, clean table, description and reference plan of seeds
    `DIGEST_SEEDS` of every split, generated afresh (never from the instance cache)."""

    def parts(split: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
        made = FAMILIES[task_id](instance_rng(task_id, split, seed))
        return (
            made.dirty,
            made.clean,
            [made.description, json.dumps(made.reference_plan, sort_keys=True)],
        )

    return digest_of(parts)


def digest_of(parts: Callable[[str, int], tuple[pd.DataFrame, pd.DataFrame, list[str]]]) -> str:
    """sha256 over seeds `DIGEST_SEEDS` of every split: each instance's dirty and clean
    tables (their CSV and dtypes) and its other `parts`, each part ended by a NUL."""
    digest = hashlib.sha256()
    for split in SPLITS:
        for seed in DIGEST_SEEDS:
            dirty, clean, others = parts(split, seed)
            for part in (
                dirty.to_csv(index=False),
                clean.to_csv(index=False),
                json.dumps({c: str(t) for c, t in dirty.dtypes.items()}),
                json.dumps({c: str(t) for c, t in clean.dtypes.items()}),
                *others,
            ):
                digest.update(part.encode("utf-8"))
                digest.update(b"\x00")
    return digest.hexdigest()


@lru_cache(maxsize=512)  # resets of the same instance reuse its tables and grader
def instance(task_id: str, split: str, seed: int) -> tuple[TaskSpec, Generated, PreservationGrader]:
    return _built(task_id, FAMILIES[task_id](instance_rng(task_id, split, seed)))


def secret_task(task_id: str, secret: bytes, index: int) -> Task:
    """Instance `index` of a family's secret split (seeded by HMAC of `secret`, see
    `generation.secret_rng`); its split reads "secret" and it carries no seed."""
    spec, generated, grader = _built(task_id, FAMILIES[task_id](secret_rng(secret, task_id, index)))
    return Task(
        spec, generated.dirty, grader, None, "secret", reference_plan=generated.reference_plan
    )


def _built(task_id: str, generated: Generated) -> tuple[TaskSpec, Generated, PreservationGrader]:
    clean = generated.clean
    spec = TaskSpec(
        task_id=task_id,
        family="generated",
        difficulty=generated.difficulty,
        description=generated.description,
        max_steps=generated.max_steps,
        operations=with_sql(generated.operations),
        scoring=dict(WEIGHTS),
        target_schema={c: kind_of(clean[c].dtype) for c in clean.columns},
        cells=generated.dirty.size,
        protected_columns=frozenset({generated.key}),
        version=GENERATOR_VERSIONS[task_id],
    )
    grader = PreservationGrader.for_task(generated.dirty, clean, generated.key)
    return spec, generated, grader


class GeneratedFamily:
    name = "generated"
    instantiate = (
        'POST /reset/{task_id} with {"seed": n, "split": "train" | "eval" | "test"}: each '
        "(task_id, seed, split) is one reproducible instance with its own rule card; the "
        "splits never share an instance. OpenEnv clients pass the same fields in the reset "
        "frame, and /data-cleaning-openenv/tasks lists instances per split."
    )

    def specs(self) -> list[TaskSpec]:
        specs = []
        for task_id in FAMILIES:
            sample, _, _ = instance(task_id, "train", 0)
            specs.append(
                TaskSpec(
                    task_id=task_id,
                    family=self.name,
                    difficulty="generated",
                    version=GENERATOR_VERSIONS[task_id],
                    description=(
                        f"Generated family ({GENERATOR_VERSIONS[task_id]}): reset with a seed (an integer >= 0) and a split "
                        f"({', '.join(SPLITS)}) to get an instance; each instance carries its "
                        f"own rule card. Instance train/0 reads: {sample.description}"
                    ),
                    max_steps=sample.max_steps,
                    operations=with_sql(sample.operations),
                    scoring=sample.scoring,
                    cells=sample.cells,
                    protected_columns=sample.protected_columns,
                )
            )
        return specs

    def make(self, task_id: str, seed: int | None, split: str = "train") -> Task:
        if split not in SPLITS:
            raise InvalidAction(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
        spec, generated, grader = instance(task_id, split, seed or 0)
        # A copy: the cached instance's tables are shared by every reset of it.
        return Task(
            spec,
            generated.dirty.copy(),
            grader,
            seed or 0,
            split,
            reference_plan=generated.reference_plan,
        )


def predicted_difficulty(task_id: str, split: str, seed: int) -> str:
    """The difficulty of instance (task_id, split, seed) without generating it: every
    generator draws its difficulty first (a test holds each family to this)."""
    return pick_difficulty(instance_rng(task_id, split, seed))[0]


def with_sql(operations: tuple[str, ...]) -> tuple[str, ...]:
    """A generated family's operations plus SQL over its table (`query` and `sql`)."""
    return tuple(dict.fromkeys((*operations, "query", "sql")))
