"""A corpus instance: the clean table with a seeded choice of its tab-err error layers.

An instance draws its difficulty, then that many distinct layers, and applies them in the
order drawn; a cell two layers corrupt keeps the first one's value. A layer that adds rows
(a duplicate, further reports of an entity) puts them right after the row they describe,
and the key numbers the instance's rows in that order (the clean table keeps the keys of
its rows), so the key tells no added row from a clean one. Each layer keeps
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

VERSION = 3  # bump when what a seed makes changes (generation/digests.py pins each version)
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
    added: dict[int, list[dict[str, Any]]] = {}  # clean row -> the rows added after it
    for layer in chosen:
        copies: dict[tuple[int, int], dict[str, Any]] = {}
        for row, copy, column, value in table.layers[layer]:
            cell = value if value != "" else np.nan
            if copy:
                copies.setdefault((row, copy), {})[column] = cell
            elif (row, column) not in taken:
                taken.add((row, column))
                values[column][row] = cell
        for (row, _), cells in copies.items():
            added.setdefault(row, []).append(cells)
    order, originals = _row_order(len(table.clean), added)
    extra = [cells for row in sorted(added) for cells in added[row]]
    dirty = pd.DataFrame(
        {
            column: np.concatenate([kept, [cells.get(column) for cells in extra]])[order]
            if extra
            else kept
            for column, kept in values.items()
        }
    )
    clean = table.clean.copy()
    clean.insert(0, KEY, originals + 1)
    dirty.insert(0, KEY, range(1, len(dirty) + 1))
    return Instance(dirty, clean, difficulty, tuple(chosen))


def _row_order(rows: int, added: dict[int, list[dict[str, Any]]]) -> tuple[list[int], np.ndarray]:
    """The instance's rows, as positions in [clean rows + added rows in row order], with
    each clean row's added rows right after it, and each clean row's position there: the key
    numbers the rows as they stand, so no key tells an added row."""
    order: list[int] = []
    originals = []
    next_added = rows
    for row in range(rows):
        originals.append(len(order))
        order.append(row)
        for _ in added.get(row, ()):
            order.append(next_added)
            next_added += 1
    return order, np.array(originals)


def describe(card: dict[str, Any]) -> str:
    return (
        f"{card['title']}: {card['rows']:,} rows identified by {KEY!r} (protected), "
        f"{len(card['columns'])} columns. Source: {card['origin']}. Licence: "
        f"{card['licence']}. Some cells were corrupted by a seeded mix of tab-err error "
        f"models (typos, stray characters, missing values written empty or as a token, "
        f"swapped categories, outliers, shifted values, wrong units, reordered or "
        f"re-separated date parts, case variants, doubled spaces, values swapped between "
        f"two columns, duplicate rows, and further reports of an entity that conflict; the "
        f"clean table holds one row per entity, its first). Repair the cells that differ from the clean table and "
        f"leave the rest exactly as written: cells are compared as text, headers do not "
        f"count, and the score is the net repair (cells repaired less cells changed to "
        f"another wrong value, over the cells that were wrong), so a wrong change costs as "
        f"much as a right one earns."
    )
