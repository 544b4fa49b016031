"""Seeded generators of dirty/clean table pairs, one module per task family.

A family's `generate(rng)` returns a `Generated` pair with its own rule card. The instance a
(family, split, seed) names is drawn from `random.Random(f"{family}:{n}")` with
n = 3 * seed + the split's index, so the three splits use disjoint instance numbers by
construction, and the same triple gives the same bytes on every machine (no salted hash()).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pandas as pd

SPLITS = ("train", "eval", "test")


def instance_number(split: str, seed: int) -> int:
    return 3 * seed + SPLITS.index(split)


def instance_rng(family: str, split: str, seed: int) -> random.Random:
    return random.Random(f"{family}:{instance_number(split, seed)}")


@dataclass(frozen=True)
class Generated:
    dirty: pd.DataFrame
    clean: pd.DataFrame
    key: str
    description: str
    max_steps: int
    operations: tuple[str, ...]
    solution: tuple[dict[str, Any], ...]  # the generator's own solution, for the oracle and tests
    difficulty: str = "generated"
