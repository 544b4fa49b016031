"""fix_types: columns that arrived as text; cast each to its type.

Per instance: which columns arrived as text at all, the number style (US, EU or plain), the
words booleans are written with (some need mapping before a cast), the date formats and
day/month order, and a postcode column whose leading zeros make it look numeric although it
must stay text. The card names each column's type; a blanket cast gets the postcodes wrong.
"""

from __future__ import annotations

import datetime as dt
import random

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.card import Card
from dataclean_env.generation.noise import pick_difficulty
from dataclean_env.generation.pools import FIRST_NAMES, LAST_NAMES, PRODUCTS
from dataclean_env.generation.treatments import (
    Dates,
    Flags,
    act,
    count,
    money,
    number_steps,
    number_style,
    present,
    state_cast,
    state_style,
)
from dataclean_env.table.values import Kind

OPERATIONS = (
    "fix_dtype",
    "map",
    "regex_replace",
    "normalize_dates",
    "validate_schema",
    "program",
    "finish",
)

# Bumped whenever what a seed produces changes (tests/unit/generation/test_generator_versions.py).
VERSION = 2


def generate(rng: random.Random) -> Generated:
    difficulty, rows, _ = pick_difficulty(rng)
    card = Card(rng, difficulty)
    style = number_style(rng)
    flags = Flags(rng, difficulty)
    dates = Dates(rng, card, ("datetime",))
    as_text = {c: present(rng, difficulty) for c in ("quantity", "unit_price", "paid")}
    start = dt.date(2023, 1, 1)
    days = [start + dt.timedelta(days=rng.randrange(700)) for _ in range(rows)]
    clean = pd.DataFrame(
        {
            "order_id": sorted(rng.sample(range(10_000, 99_999), rows)),
            "customer": [
                f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(rows)
            ],
            "product": [rng.choice(PRODUCTS) for _ in range(rows)],
            "postcode": [f"{rng.randint(0, 99_999):05d}" for _ in range(rows)],
            "quantity": [rng.choice([0, 1, 1, 2, 3, 5, 12, 1500, 2400]) for _ in range(rows)],
            "unit_price": [round(rng.uniform(-5, 4000), 2) for _ in range(rows)],  # refunds < 0
            "paid": [rng.random() < 0.7 for _ in range(rows)],
            "ordered_on": pd.to_datetime(days),
        }
    )
    dirty = clean.copy()
    if as_text["quantity"]:
        dirty["quantity"] = [count(v, style) for v in clean["quantity"]]
    if as_text["unit_price"]:
        dirty["unit_price"] = [money(v, style) for v in clean["unit_price"]]
    if as_text["paid"]:
        dirty["paid"] = [flags.render(v) for v in clean["paid"]]
    dirty["ordered_on"] = [dates.render(d) for d in days]
    for column in ("customer", "product", "postcode", "ordered_on"):
        clean[column] = clean[column].astype("str") if column != "ordered_on" else clean[column]
        dirty[column] = dirty[column].astype("str")
    for column in ("quantity", "unit_price", "paid"):
        if as_text[column]:
            dirty[column] = dirty[column].astype("str")

    if as_text["quantity"] or as_text["unit_price"]:
        state_style(card, style)
    state_cast(card, "quantity", Kind.INT)
    state_cast(card, "unit_price", Kind.FLOAT)
    if as_text["paid"]:
        flags.state(card, "paid")
    else:
        state_cast(card, "paid", Kind.BOOL)
    dates.state(card, "ordered_on")
    card.state("keep_text", col="postcode")
    description = card.text(
        f"Sales transactions ({rows} rows, {difficulty}) where columns arrived as text.",
        "Negative prices are refunds: keep them. customer and product stay text. order_id "
        "is the protected key.",
    )
    plan = (
        *(number_steps("quantity", style, Kind.INT) if as_text["quantity"] else []),
        *(number_steps("unit_price", style, Kind.FLOAT) if as_text["unit_price"] else []),
        *(flags.steps("paid") if as_text["paid"] else []),
        *dates.steps("ordered_on"),
    )
    plan = (act("program", operations=list(plan)),)
    return Generated(
        dirty, clean, "order_id", description, 12, OPERATIONS, plan, difficulty=difficulty
    )
