"""The training rows: reset arguments for any families, split and seeds, as one call.

    from dataclean_env.training.rows import rows, as_dataset, to_jsonl

    rows(["generated"], split="train", seeds="0-255")   # [{"task_id", "seed", "split"}, ...]
    as_dataset(rows("crm", seeds=range(64)))            # a datasets.Dataset, if installed

The environment owns its dataset: TRL's example and the verifiers taskset (through
`GET /tasks/rows`, the same function on a server) take their rows from here. Seed-major
order (every task at seed 0, then at seed 1, ...), so a list cut at `n` covers every task.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

from dataclean_env.benchmark.selection import iter_seeds, task_ids
from dataclean_env.tasks import TaskRegistry

MAX_ROWS = 100_000  # rows per call of GET /tasks/rows (seeds are read only as far as needed)


def rows(
    families: str | Sequence[str] = "generated",
    split: str = "train",
    seeds: str | Iterable[int] = "0",
    n: int | None = None,
    registry: TaskRegistry | None = None,
) -> list[dict[str, Any]]:
    """One row of reset arguments per (task, seed). `families`: kinds as `GET /tasks` groups
    them (fixed, generated, custom, showcase, claims, all), generated families (crm) or task
    ids; `seeds`: '0-9,12' or integers; `n`: at most this many rows."""
    if registry is None:
        from dataclean_env.settings import get_settings
        from dataclean_env.tasks import registry_for

        registry = registry_for(get_settings())
    names = [families] if isinstance(families, str) else list(families)
    known = set(registry.task_ids())
    chosen = [
        task
        for name in names
        for task in ([name] if name in known else task_ids(registry, None, name))
    ]
    tasks = list(dict.fromkeys(chosen))
    seed_list = iter_seeds(seeds) if isinstance(seeds, str) else seeds
    # Seed-major, as the runner plays them (`selection.episodes`), built only up to `n`.
    keys = ((task, seed) for seed in seed_list for task in tasks)
    return [{"task_id": t, "seed": s, "split": split} for t, s in islice(keys, n)]


def to_jsonl(table: Iterable[dict[str, Any]]) -> str:
    """The rows as JSON Lines, one reset's arguments per line."""
    return "".join(json.dumps(row) + "\n" for row in table)


def as_dataset(table: list[dict[str, Any]]) -> Any:
    """The rows as a `datasets.Dataset` (Hugging Face's `datasets`, which TRL installs; not a
    dependency of this package)."""
    # By name: a checkout's own `datasets/` folder would otherwise pass for the package.
    dataset_class = getattr(importlib.import_module("datasets"), "Dataset", None)
    if dataset_class is None:
        raise ImportError(
            "as_dataset needs the `datasets` package (pip install datasets); "
            "rows() and to_jsonl() need nothing"
        )
    return dataset_class.from_list(table)
