"""Helpers the generators share: instance size by difficulty, names, padding, phone digits,
and near-duplicate rows. Per-column dirt and its repair live in `treatments.py`."""

from __future__ import annotations

import random
from typing import Any

from dataclean_env.generation.pools import FIRST_NAMES, LAST_NAMES

# Difficulty -> (fewest rows, most rows, share of cells made dirty by the optional noises).
DIFFICULTIES = {"easy": (10, 40, 0.15), "medium": (40, 100, 0.3), "hard": (100, 200, 0.45)}


def pick_difficulty(rng: random.Random) -> tuple[str, int, float]:
    """(difficulty, rows, noise rate) of one instance: 10 to 200 rows."""
    name = rng.choice(list(DIFFICULTIES))
    low, high, rate = DIFFICULTIES[name]
    return name, rng.randint(low, high), rate


def full_name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def padded(rng: random.Random, text: str) -> str:
    return rng.choice(["", " ", "  "]) + text + rng.choice(["", " "])


def phone_digits(rng: random.Random) -> str:
    return f"{rng.randint(201, 989)}{rng.randint(200, 999)}{rng.randint(0, 9999):04d}"


def shuffled_with(
    rng: random.Random, rows: list[dict[str, Any]], copies: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """`rows` and their near-duplicate `copies` in one shuffled list."""
    result = rows + copies
    rng.shuffle(result)
    return result
