"""Contacts whose columns are written in mixed formats: the table of the standardisation kind.

Each column has one canonical form that a transform built from registry operations reaches
exactly: names trimmed in Title Case, emails lower case, phones (XXX) XXX-XXXX, countries
spelled out (this instance's two aliases), signup dates ISO (slashed ones in this instance's
day/month order), amounts as numbers (US or EU currency text). No rows are added or lost.
"""

from __future__ import annotations

import datetime as dt
import io
import random
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dataclean_env.generation.claims_noise import (
    aliases_for,
    date_order,
    described_mapping,
    full_name,
    money,
    noisy_name,
    noisy_phone,
    phone_digits,
    us_phone,
    written_date,
)
from dataclean_env.operations.formats import eu_number_steps

# Countries and their variant spellings (frozen: the family's instances depend on them).
COUNTRIES = {
    "United States": ("USA", "U.S.", "US of A"),
    "Germany": ("Deutschland", "DE", "Germny"),
    "France": ("FR", "Frankreich", "Fance"),
    "Brazil": ("Brasil", "BR"),
    "Japan": ("JP", "Nippon"),
    "Nigeria": ("NG", "Nigera"),
}

KEY = "contact_id"
SIZES = {"easy": (15, 30), "medium": (30, 80), "hard": (80, 150)}


@dataclass(frozen=True)
class Formatted:
    dirty: pd.DataFrame
    gold: pd.DataFrame
    key: str
    difficulty: str
    card: str
    transforms: dict[str, list[dict[str, Any]]]  # the reference transform per column


def _read(frame: pd.DataFrame) -> pd.DataFrame:
    text = frame.to_csv(index=False)
    return pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])


def row_bounds() -> tuple[int, int]:
    """The fewest and most rows a table can have (no rows are added or lost)."""
    return min(low for low, _ in SIZES.values()), max(high for _, high in SIZES.values())


def generate(rng: random.Random, difficulty: str | None = None) -> Formatted:
    difficulty = difficulty or rng.choice(list(SIZES))
    rows = rng.randint(*SIZES[difficulty])
    convention, style = rng.choice(["us", "eu"]), rng.choice(["us", "eu"])
    aliases = aliases_for(rng, COUNTRIES)
    alias_of = {value: alias for alias, value in aliases.items()}
    ids = sorted(rng.sample(range(10_000, 99_999), rows))
    clean, dirty = [], []
    for contact_id in ids:
        name, digits = full_name(rng), phone_digits(rng)
        country = rng.choice(sorted(COUNTRIES))
        day = dt.date(2018, 1, 1) + dt.timedelta(days=rng.randrange(2500))
        amount = round(rng.uniform(1, 9_000), 2)
        email = f"{name.split()[0].lower()}.{contact_id}@mail.example"
        clean.append(
            {
                KEY: contact_id,
                "full_name": name,
                "email": email,
                "phone": us_phone(digits),
                "country": country,
                "signup_date": day.isoformat(),
                "amount": amount,
            }
        )
        shown_country = alias_of.get(country, country) if rng.random() < 0.7 else country
        dirty.append(
            {
                KEY: contact_id,
                "full_name": noisy_name(rng, name),
                "email": email.upper() if rng.random() < 0.4 else f" {email}",
                "phone": noisy_phone(rng, digits),
                "country": shown_country,
                "signup_date": written_date(rng, day, convention),
                "amount": money(amount, style),
            }
        )
    currency = "US style ($1,234.50)" if style == "us" else "EU style (1.234,50 €)"
    card = (
        f"Contacts export ({rows} rows, {difficulty}); {KEY} is the protected key. Standardise "
        "every column: full_name trimmed and in Title Case; email trimmed and lower case; "
        "phone written (XXX) XXX-XXXX; country spelled out in full — in this export "
        f"{described_mapping(aliases)}; signup_date as ISO text — slashed dates are "
        f"{date_order(convention)}; amount is written {currency} and must become a number."
    )
    transforms: dict[str, list[dict[str, Any]]] = {
        "full_name": [{"operation": "strip"}, {"operation": "title"}],
        "email": [{"operation": "strip"}, {"operation": "lower"}],
        "phone": [{"operation": "phone_us"}],
        "country": [{"operation": "map", "parameters": {"mapping": aliases}}],
        "signup_date": [{"operation": "normalize_dates", "parameters": {"convention": convention}}],
        "amount": [
            *(eu_number_steps("amount") if style == "eu" else []),
            {"operation": "fix_dtype", "parameters": {"dtype": "float"}},
        ],
    }
    return Formatted(
        _read(pd.DataFrame(dirty)), _read(pd.DataFrame(clean)), KEY, difficulty, card, transforms
    )
