"""Seeded generators of dirty/clean table pairs, one module per task family.

A family's `generate(rng)` returns a `Generated` pair with its own rule card. The instance a
(family, split, seed) names is drawn from `random.Random(f"{family}:{n}")` with
n = 3 * seed + the split's index, so the three splits use disjoint instance numbers by
construction, and the same triple gives the same bytes on every machine (no salted hash()).

A secret split (the leaderboard's) draws instance n of a family from a seed derived with
HMAC-SHA256 of a server secret instead (`secret_rng`): the same generators, but without the
secret nobody can regenerate its tables, so their gold stays hidden.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from dataclasses import dataclass
from typing import Any

import pandas as pd

SPLITS = ("train", "eval", "test")


def instance_number(split: str, seed: int) -> int:
    return 3 * seed + SPLITS.index(split)


def instance_rng(family: str, split: str, seed: int) -> random.Random:
    return random.Random(f"{family}:{instance_number(split, seed)}")


def secret_seed(secret: bytes, family: str, index: int) -> str:
    """The seed of instance `index` of `family` in the secret split: HMAC-SHA256 of the
    secret over "family:index", as hex. Knowing the index without the secret gives nothing."""
    return hmac.new(secret, f"{family}:{index}".encode(), hashlib.sha256).hexdigest()


def secret_rng(secret: bytes, family: str, index: int) -> random.Random:
    return random.Random(secret_seed(secret, family, index))


def instance_hash(seed: str) -> str:
    """A name for a secret instance that can be published and stored: a hash of its seed,
    from which the seed cannot be recovered."""
    return hashlib.sha256(f"dce-instance:{seed}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Generated:
    dirty: pd.DataFrame
    clean: pd.DataFrame
    key: str
    description: str
    max_steps: int
    operations: tuple[str, ...]
    reference_plan: tuple[dict[str, Any], ...]  # the generator's plan, for the oracle and tests
    difficulty: str = "generated"
