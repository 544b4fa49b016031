"""A corpus instance: the clean table with a seeded choice of its tab-err error layers.

An instance draws its difficulty, then that many distinct layers, and applies them in the
order drawn; a cell two layers corrupt keeps the first one's value. Each layer keeps
tab-err's own error mechanism (which rows it hit, at random or conditioned on a column), so
an instance's errors are tab-err's, only their mix is the seed's. The same table, rng state
and VERSION give the same bytes on every machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dataclean_env.corpus.tables import CorpusTable

VERSION = 1  # bump when what a seed makes changes (generation/digests.py pins each version)
KEY = "row_id"
# difficulty -> how many layers an instance applies (at most the table's)
LAYERS_PER_DIFFICULTY = {"easy": (3, 5), "medium": (6, 10), "hard": (11, 16)}


@dataclass(frozen=True)
class Instance:
    dirty: pd.DataFrame
    clean: pd.DataFrame
    difficulty: str
    layers: tuple[int, ...]  # the layers applied, in order


def compose(table: CorpusTable, rng: random.Random) -> Instance:
    difficulty = rng.choice(list(LAYERS_PER_DIFFICULTY))
    low, high = LAYERS_PER_DIFFICULTY[difficulty]
    chosen = rng.sample(sorted(table.layers), min(rng.randint(low, high), len(table.layers)))
    values = {c: table.clean[c].to_numpy(dtype=object, copy=True) for c in table.clean.columns}
    taken: set[tuple[int, str]] = set()
    for layer in chosen:
        column = table.layer_columns[layer]
        for row, value in table.layers[layer]:
            if (row, column) not in taken:
                taken.add((row, column))
                values[column][row] = value if value != "" else np.nan
    clean = table.clean.copy()
    dirty = clean.copy()
    for column, column_values in values.items():
        dirty[column] = column_values
    ids = range(1, len(clean) + 1)
    clean.insert(0, KEY, ids)
    dirty.insert(0, KEY, ids)
    return Instance(dirty, clean, difficulty, tuple(chosen))


def describe(card: dict[str, Any]) -> str:
    return (
        f"{card['title']}: {card['rows']:,} rows identified by {KEY!r} (protected), "
        f"{len(card['columns'])} columns. Source: {card['origin']}. Licence: "
        f"{card['licence']}. Some cells were corrupted by a seeded mix of tab-err error "
        f"models (typos, stray characters, missing values written empty or as a token, "
        f"swapped categories, outliers, shifted values, wrong units, reordered or "
        f"re-separated date parts). Repair the cells that differ from the clean table and "
        f"leave the rest exactly as written: cells are compared as text, headers do not "
        f"count, and the score is the repair F1, so a wrong change costs as much as a right "
        f"one earns."
    )
