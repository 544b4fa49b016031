"""Noise recipes of the v1 generators, kept for the claim families (detection, standardisation,
audit), whose instances and digests depend on them exactly. The cleaning families use
`noise.py` and `treatments.py` (v2)."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from dataclean_env.generation.pools import FIRST_NAMES, LAST_NAMES

# Difficulty -> (fewest rows, most rows, share of cells made dirty by the optional noises).
DIFFICULTIES = {"easy": (10, 40, 0.15), "medium": (40, 100, 0.3), "hard": (100, 200, 0.45)}
NULL_TOKENS = ("N/A", "null", "-", "")
BOOL_WORDS = (("yes", "no"), ("true", "false"), ("Y", "N"))  # what fix_dtype reads as bool


def pick_difficulty(rng: random.Random) -> tuple[str, int, float]:
    """(difficulty, rows, noise rate) of one instance: 10 to 200 rows."""
    name = rng.choice(list(DIFFICULTIES))
    low, high, rate = DIFFICULTIES[name]
    return name, rng.randint(low, high), rate


def full_name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def padded(rng: random.Random, text: str) -> str:
    return rng.choice(["", " ", "  "]) + text + rng.choice(["", " "])


def noisy_name(rng: random.Random, name: str) -> str:
    """Casing and whitespace noise that strip + title undo exactly."""
    # Only casings that title-casing undoes (upper-casing a Turkish dotless i gives "I", whose
    # title case is "i": that noise would be unrepairable).
    variants = [v for v in (name.lower(), name.upper()) if v.title() == name]
    return padded(rng, rng.choice([name, name, *variants]))


def noisy_phone(rng: random.Random, digits: str) -> str:
    a, b, c = digits[:3], digits[3:6], digits[6:]
    return rng.choice(
        [f"({a}) {b}-{c}", f"{a}-{b}-{c}", f"{a}.{b}.{c}", f"+1 {a} {b} {c}", f"{a}{b}{c}"]
    )


def phone_digits(rng: random.Random) -> str:
    return f"{rng.randint(201, 989)}{rng.randint(200, 999)}{rng.randint(0, 9999):04d}"


def us_phone(digits: str) -> str:
    return f"({digits[:3]}) {digits[3:6]}-{digits[6:]}"


def written_date(rng: random.Random, day: dt.date, convention: str) -> str:
    """ISO about a third of the time, else slashed in the instance's day/month order."""
    if rng.random() < 0.35:
        return day.isoformat()
    first, second = (day.month, day.day) if convention == "us" else (day.day, day.month)
    return f"{first:02d}/{second:02d}/{day.year}"


def date_order(convention: str) -> str:
    return "month first (US)" if convention == "us" else "day first (EU)"


def money(value: float, style: str) -> str:
    """An amount as an export writes it: "$1,234.50" (us) or "1.234,50 €" (eu)."""
    text = f"{abs(value):,.2f}"
    sign = "-" if value < 0 else ""
    if style == "us":
        return f"{sign}${text}"
    return sign + text.replace(",", " ").replace(".", ",").replace(" ", ".") + " €"


def count(value: int, style: str) -> str:
    """A whole number with thousands separators in the instance's style."""
    text = f"{value:,}"
    return text.replace(",", ".") if style == "eu" else text


def aliases_for(
    rng: random.Random, canonical: dict[str, tuple[str, ...]], how_many: int = 2
) -> dict[str, str]:
    """This instance's one-off spellings: alias -> canonical value, drawn from `canonical`."""
    picked = rng.sample(sorted(canonical), how_many)
    return {rng.choice(canonical[value]): value for value in picked}


def described_mapping(mapping: dict[str, str]) -> str:
    return ", ".join(f"'{alias}' means '{value}'" for alias, value in mapping.items())


def shuffled_with(
    rng: random.Random, rows: list[dict[str, Any]], copies: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """`rows` and their near-duplicate `copies` in one shuffled list."""
    result = rows + copies
    rng.shuffle(result)
    return result
