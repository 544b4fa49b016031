"""normalize_dedupe: names, emails, dates, phones and cities in mixed forms, and duplicates.

Per instance: the phone pattern gold uses, whether emails arrive upper-cased, the day/month
order of slashed dates (left to the data on some hard instances), variant city spellings,
and whether customers appear twice. From medium up, surnames with particles arrive right
and must survive; a blanket Title Case breaks them.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.card import Card
from dataclean_env.generation.noise import phone_digits, pick_difficulty, shuffled_with
from dataclean_env.generation.pools import CITIES
from dataclean_env.generation.treatments import Aliases, Dates, Names, Phones, act, present

OPERATIONS = (
    "strip",
    "title",
    "upper",
    "lower",
    "fix_dtype",
    "phone_us",
    "map",
    "regex_replace",
    "normalize_dates",
    "dedupe",
    "show_rows",
    "program",
    "finish",
)

# Bumped whenever what a seed produces changes (tests/unit/generation/test_generator_versions.py).
VERSION = 2


def generate(rng: random.Random) -> Generated:
    difficulty, rows, _ = pick_difficulty(rng)
    card = Card(rng, difficulty)
    names, phones = Names(rng, difficulty), Phones(rng, difficulty)
    cities = Aliases(rng, card, list(CITIES))
    dates = Dates(rng, card, ("text", "datetime"))
    upper_emails, has_copies = present(rng, difficulty), present(rng, difficulty)
    clean_rows = [
        {
            "customer_id": customer_id,
            "name": names.draw(),
            "email": f"user{number}@example.org",
            "phone": phone_digits(rng),
            "signup_date": dt.date(2022, 1, 1) + dt.timedelta(days=rng.randrange(900)),
            "city": rng.choice(CITIES),
        }
        for customer_id, number in zip(
            sorted(rng.sample(range(1000, 9999), rows)),
            rng.sample(range(10_000), rows),
            strict=True,
        )
    ]

    def dirty_row(row: dict[str, Any]) -> dict[str, Any]:
        return {
            "customer_id": row["customer_id"],
            "name": names.render(row["name"]),
            "email": row["email"].upper() if upper_emails and rng.random() < 0.3 else row["email"],
            "phone": phones.render(row["phone"]),
            "signup_date": dates.render(row["signup_date"]),
            "city": cities.render(row["city"]),
        }

    firsts = [dirty_row(row) for row in clean_rows]
    copies = (
        [dirty_row(row) for row in rng.sample(clean_rows, max(1, round(rows * 0.15)))]
        if has_copies
        else []
    )
    dirty = pd.DataFrame(shuffled_with(rng, firsts, copies))
    clean = pd.DataFrame(clean_rows)
    clean["name"] = [names.gold(n) for n in clean["name"]]
    clean["phone"] = [phones.gold(p) for p in clean["phone"]]
    clean["signup_date"] = [dates.gold(d) for d in clean["signup_date"]]
    if dates.target == "datetime":
        clean["signup_date"] = pd.to_datetime(clean["signup_date"])

    names.state(card, "name")
    if upper_emails:
        card.state("lower", col="email")
    phones.state(card, "phone")
    dates.state(card, "signup_date")
    cities.state(card, "city")
    if has_copies:
        card.state("dedupe_key", key="customer_id")
    description = card.text(
        f"Customer list ({len(dirty)} rows, {difficulty}).",
        "customer_id is the protected key.",
    )
    plan = (
        act("strip"),
        *names.steps("name"),
        *([act("lower", column="email")] if upper_emails else []),
        *phones.steps("phone"),
        *dates.steps("signup_date"),
        *cities.steps("city"),
        *([act("dedupe", keys=["customer_id"])] if has_copies else []),
    )
    return Generated(
        dirty, clean, "customer_id", description, 15, OPERATIONS, plan, difficulty=difficulty
    )
