"""normalize_dedupe: names, dates and phones in mixed formats, and ~15% duplicate records.

The rule card says which day/month order this instance's slashed dates use, so the same
plan with the wrong convention fails on the ambiguous dates.
"""

from __future__ import annotations

import datetime as dt
import random

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.noise import (
    date_order,
    full_name,
    noisy_name,
    noisy_phone,
    phone_digits,
    pick_difficulty,
    us_phone,
    written_date,
)
from dataclean_env.generation.pools import CITIES


def generate(rng: random.Random) -> Generated:
    difficulty, rows, _ = pick_difficulty(rng)
    convention = rng.choice(["us", "eu"])
    names = [full_name(rng) for _ in range(rows)]
    days = [dt.date(2022, 1, 1) + dt.timedelta(days=rng.randrange(900)) for _ in range(rows)]
    phones = [phone_digits(rng) for _ in range(rows)]
    clean = pd.DataFrame(
        {
            "customer_id": sorted(rng.sample(range(1000, 9999), rows)),
            "name": names,
            "email": [f"user{i}@example.org" for i in rng.sample(range(10_000), rows)],
            "phone": [us_phone(p) for p in phones],
            "signup_date": [d.isoformat() for d in days],
            "city": [rng.choice(CITIES) for _ in range(rows)],
        }
    )
    dirty = clean.copy()
    dirty["name"] = [noisy_name(rng, n) for n in names]
    dirty["phone"] = [noisy_phone(rng, p) for p in phones]
    dirty["signup_date"] = [written_date(rng, d, convention) for d in days]
    copies = dirty.sample(n=max(1, round(rows * 0.15)), random_state=rng.randrange(2**31))
    copies = copies.assign(name=[noisy_name(rng, n.strip().title()) for n in copies["name"]])
    dirty = pd.concat([dirty, copies]).sample(frac=1, random_state=rng.randrange(2**31))
    dirty = dirty.reset_index(drop=True)
    description = (
        f"Customer list ({len(dirty)} rows, {difficulty}). Names must be trimmed and in Title Case; phones "
        f"written (XXX) XXX-XXXX; signup dates as ISO text — slashed dates here are {date_order(convention)}. "
        "Some customers appear more than once with small differences: keep one row per "
        "customer_id. customer_id is the protected key."
    )
    operations = ("strip", "title", "phone_us", "normalize_dates", "dedupe", "program", "finish")
    plan = (
        {"operation": "strip", "parameters": {}},
        {"operation": "title", "parameters": {"column": "name"}},
        {"operation": "phone_us", "parameters": {"column": "phone"}},
        {
            "operation": "normalize_dates",
            "parameters": {"column": "signup_date", "convention": convention},
        },
        {"operation": "dedupe", "parameters": {"keys": ["customer_id"]}},
    )
    return Generated(
        dirty, clean, "customer_id", description, 15, operations, plan, difficulty=difficulty
    )
