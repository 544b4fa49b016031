"""fix_types: columns that arrived as text; cast each to its type.

Per instance: which columns arrived as text at all, the number style (US, EU or plain), the
words booleans are written with (some need mapping before a cast), the date formats and
day/month order, and a postcode column whose leading zeros make it look numeric although it
must stay text. The card names each column's type; a blanket cast gets the postcodes wrong.
"""

from __future__ import annotations

import datetime as dt
import random

from dataclean_env.generation import Generated
from dataclean_env.generation.card import Card
from dataclean_env.generation.columns import COLUMNS, Column, Table, each
from dataclean_env.generation.noise import pick_difficulty
from dataclean_env.generation.pools import FIRST_NAMES, LAST_NAMES, PRODUCTS
from dataclean_env.generation.treatments import (
    Dates,
    Flags,
    Numbers,
    act,
    number_style,
    present,
    state_cast,
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
    quantities = Numbers(rng, difficulty, style, Kind.INT)
    prices = Numbers(rng, difficulty, style, Kind.FLOAT)
    paid_as_text = present(rng, difficulty)
    start = dt.date(2023, 1, 1)
    days = [start + dt.timedelta(days=rng.randrange(700)) for _ in range(rows)]
    # Each column is drawn whole, one after the other (the order version 2 froze).
    table = Table(
        rng,
        rows,
        (
            Column(
                "order_id",
                each(sorted(rng.sample(range(10_000, 99_999), rows))),
                typed_export=True,
                dtype="typed",
            ),
            Column(
                "customer",
                each([f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(rows)]),
            ),
            Column("product", each([rng.choice(PRODUCTS) for _ in range(rows)])),
            Column(
                "postcode",
                each([f"{rng.randint(0, 99_999):05d}" for _ in range(rows)]),
                rules=lambda card: card.state("keep_text", col="postcode"),
            ),
            Column(
                "quantity",
                each([rng.choice([0, 1, 1, 2, 3, 5, 12, 1500, 2400]) for _ in range(rows)]),
                dirt=lambda row: quantities.render(row["quantity"]),
                dtype="typed",
                typed_export=not quantities.as_text,
                rules=lambda card: state_cast(card, "quantity", Kind.INT),
                repair=lambda: quantities.steps("quantity"),
                styled=True,
            ),
            Column(
                "unit_price",  # negative prices are refunds
                each([round(rng.uniform(-5, 4000), 2) for _ in range(rows)]),
                dirt=lambda row: prices.render(row["unit_price"]),
                dtype="typed",
                typed_export=not prices.as_text,
                rules=lambda card: state_cast(card, "unit_price", Kind.FLOAT),
                repair=lambda: prices.steps("unit_price"),
                styled=True,
            ),
            Column(
                "paid",
                each([rng.random() < 0.7 for _ in range(rows)]),
                dirt=lambda row: flags.render(row["paid"]) if paid_as_text else row["paid"],
                dtype="typed",
                typed_export=not paid_as_text,
                rules=lambda card: (
                    flags.state(card, "paid")
                    if paid_as_text
                    else state_cast(card, "paid", Kind.BOOL)
                ),
                repair=lambda: flags.steps("paid") if paid_as_text else [],
            ),
            Column(
                "ordered_on",
                each(days),
                dirt=lambda row: dates.render(row["ordered_on"]),
                dtype="datetime",
                rules=lambda card: dates.state(card, "ordered_on"),
                repair=lambda: dates.steps("ordered_on"),
            ),
        ),
        style=style,
        card_order=(COLUMNS, "postcode"),
    )
    dirty, clean = table.generate()
    table.state(card)
    description = card.text(
        f"Sales transactions ({rows} rows, {difficulty}) where columns arrived as text.",
        "Negative prices are refunds: keep them. customer and product stay text. order_id "
        "is the protected key.",
    )
    plan = (act("program", operations=table.plan()),)
    return Generated(
        dirty, clean, "order_id", description, 12, OPERATIONS, plan, difficulty=difficulty
    )
