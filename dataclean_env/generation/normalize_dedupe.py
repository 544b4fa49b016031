"""normalize_dedupe: names, emails, dates, phones and cities in mixed forms, and duplicates.

Per instance: the phone pattern gold uses, whether emails arrive upper-cased, the day/month
order of slashed dates (left to the data on some hard instances), variant city spellings,
and whether customers appear twice. From medium up, surnames with particles arrive right
and must survive; a blanket Title Case breaks them.
"""

from __future__ import annotations

import datetime as dt
import random

from dataclean_env.generation import Generated
from dataclean_env.generation.card import Card
from dataclean_env.generation.columns import (
    COLUMNS,
    STRIP,
    Column,
    Copies,
    Table,
    each,
    treated,
)
from dataclean_env.generation.noise import phone_digits, pick_difficulty
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
    table = Table(
        rng,
        rows,
        (
            Column(
                "customer_id",
                each(sorted(rng.sample(range(1000, 9999), rows))),
                dtype="typed",
                typed_export=True,
            ),
            treated("name", lambda row: names.draw(), names),
            Column(
                "email",
                each(f"user{number}@example.org" for number in rng.sample(range(10_000), rows)),
                dirt=lambda row: (
                    row["email"].upper() if upper_emails and rng.random() < 0.3 else row["email"]
                ),
                rules=lambda card: card.state("lower", col="email") if upper_emails else None,
                repair=lambda: [act("lower", column="email")] if upper_emails else [],
            ),
            treated("phone", lambda row: phone_digits(rng), phones),
            treated(
                "signup_date",
                lambda row: dt.date(2022, 1, 1) + dt.timedelta(days=rng.randrange(900)),
                dates,
                dates.dtype,
            ),
            treated("city", lambda row: rng.choice(CITIES), cities),
        ),
        (STRIP,),
        copies=Copies(
            max(1, round(rows * 0.15)) if has_copies else 0, exact=False, key="customer_id"
        ),
        plan_order=("strip", COLUMNS, "copies"),
    )
    dirty, clean = table.generate()
    table.state(card)
    description = card.text(
        f"Customer list ({len(dirty)} rows, {difficulty}).",
        "customer_id is the protected key.",
    )
    return Generated(
        dirty,
        clean,
        "customer_id",
        description,
        15,
        OPERATIONS,
        tuple(table.plan()),
        difficulty=difficulty,
    )
