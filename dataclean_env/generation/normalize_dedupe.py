"""normalize_dedupe: names, dates and phones in mixed formats, and ~15% duplicate records.

The rule card says which day/month order this instance's slashed dates use, so the same
plan with the wrong convention fails on the ambiguous dates.
"""

from __future__ import annotations

import datetime as dt
import random

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.pools import CITIES, FIRST_NAMES, LAST_NAMES


def _noisy_name(rng: random.Random, name: str) -> str:
    # Only casings that title-casing undoes (upper-casing a Turkish dotless i gives "I", whose
    # title case is "i": that noise would be unrepairable).
    variants = [v for v in (name.lower(), name.upper()) if v.title() == name]
    spelled = rng.choice([name, name, *variants])
    return rng.choice(["", " ", "  "]) + spelled + rng.choice(["", " "])


def _noisy_phone(rng: random.Random, digits: str) -> str:
    a, b, c = digits[:3], digits[3:6], digits[6:]
    return rng.choice(
        [f"({a}) {b}-{c}", f"{a}-{b}-{c}", f"{a}.{b}.{c}", f"+1 {a} {b} {c}", f"{a}{b}{c}"]
    )


def _written_date(rng: random.Random, day: dt.date, convention: str) -> str:
    if rng.random() < 0.35:
        return day.isoformat()
    first, second = (day.month, day.day) if convention == "us" else (day.day, day.month)
    return f"{first:02d}/{second:02d}/{day.year}"


def generate(rng: random.Random) -> Generated:
    rows = rng.randint(12, 80)
    convention = rng.choice(["us", "eu"])
    names = [f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(rows)]
    days = [dt.date(2022, 1, 1) + dt.timedelta(days=rng.randrange(900)) for _ in range(rows)]
    phones = [
        f"{rng.randint(201, 989)}{rng.randint(200, 999)}{rng.randint(0, 9999):04d}"
        for _ in range(rows)
    ]
    clean = pd.DataFrame(
        {
            "customer_id": sorted(rng.sample(range(1000, 9999), rows)),
            "name": names,
            "email": [f"user{i}@example.org" for i in rng.sample(range(10_000), rows)],
            "phone": [f"({p[:3]}) {p[3:6]}-{p[6:]}" for p in phones],
            "signup_date": [d.isoformat() for d in days],
            "city": [rng.choice(CITIES) for _ in range(rows)],
        }
    )
    dirty = clean.copy()
    dirty["name"] = [_noisy_name(rng, n) for n in names]
    dirty["phone"] = [_noisy_phone(rng, p) for p in phones]
    dirty["signup_date"] = [_written_date(rng, d, convention) for d in days]
    copies = dirty.sample(n=max(1, round(rows * 0.15)), random_state=rng.randrange(2**31))
    copies = copies.assign(name=[_noisy_name(rng, n.strip().title()) for n in copies["name"]])
    dirty = pd.concat([dirty, copies]).sample(frac=1, random_state=rng.randrange(2**31))
    dirty = dirty.reset_index(drop=True)
    order = "month first (US)" if convention == "us" else "day first (EU)"
    description = (
        f"Customer list ({len(dirty)} rows). Names must be trimmed and in Title Case; phones "
        f"written (XXX) XXX-XXXX; signup dates as ISO text — slashed dates here are {order}. "
        "Some customers appear more than once with small differences: keep one row per "
        "customer_id. customer_id is the protected key."
    )
    operations = ("strip", "title", "phone_us", "normalize_dates", "dedupe", "program", "finish")
    return Generated(dirty, clean, "customer_id", description, 15, operations)
