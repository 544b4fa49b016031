"""inventory: a warehouse stock count (DataClean-RL domain); programs allowed in one step.

Dirt, chosen per instance: padded product names, variant warehouse spellings, stock counts
and unit costs as text in the instance's number style (or already typed), a few negative
scanner misreads (gold 0), reorder levels left as the instance's placeholder tokens (they
mean 0), discontinued flags in the instance's word pair, count dates in the instance's
day/month order (gold ISO text or a datetime), and near-duplicate rows of the same SKU.
Zero stock is real.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from dataclean_env.generation import Generated
from dataclean_env.generation.card import Card
from dataclean_env.generation.columns import (
    COLUMNS,
    Column,
    Copies,
    Table,
    each,
    treated,
)
from dataclean_env.generation.noise import padded, pick_difficulty
from dataclean_env.generation.pools import PRODUCTS
from dataclean_env.generation.treatments import (
    Aliases,
    Dates,
    Flags,
    Numbers,
    Tokens,
    act,
    number_style,
    present,
    state_cast,
)
from dataclean_env.table.values import Kind

WAREHOUSES = ("Berlin DC", "Lagos Hub", "Osaka Depot", "Toronto Yard", "Lima Store", "Austin Lot")
OPERATIONS = (
    "strip",
    "map",
    "replace_missing",
    "fill_missing",
    "regex_replace",
    "normalize_dates",
    "fix_dtype",
    "clamp_outliers",
    "dedupe",
    "drop_rows",
    "set_cell",
    "show_rows",
    "program",
    "finish",
)

# Bumped whenever what a seed produces changes (tests/unit/generation/test_generator_versions.py).
VERSION = 2


def generate(rng: random.Random) -> Generated:
    difficulty, rows, rate = pick_difficulty(rng)
    card = Card(rng, difficulty)
    style = number_style(rng)
    counts, costs = (
        Numbers(rng, difficulty, style, Kind.INT),
        Numbers(rng, difficulty, style, Kind.FLOAT),
    )
    flags = Flags(rng, difficulty)
    warehouses = Aliases(rng, card, list(WAREHOUSES))
    tokens = Tokens(rng, "0")
    dates = Dates(rng, card, ("text", "datetime"))
    padded_products, has_copies = present(rng, difficulty), present(rng, difficulty)
    has_misreads = present(rng, difficulty)
    misread: set[str] = set()

    def misreads(rows: list[dict[str, Any]]) -> None:
        # Misread shelves are empty ones: gold says 0, the export a small negative count.
        if has_misreads:
            chosen = rng.sample(rows, max(1, round(len(rows) * rate / 5)))
            misread.update(row["sku"] for row in chosen)
        for row in rows:
            if row["sku"] in misread:
                row["on_hand"] = 0

    def on_hand_rules(card: Card) -> None:
        if has_misreads:
            card.state("floor0_int", col="on_hand")
        else:
            state_cast(card, "on_hand", Kind.INT)

    def reorder_rules(card: Card) -> None:
        state_cast(card, "reorder_level", Kind.INT)
        tokens.state(card, "reorder_level")

    table = Table(
        rng,
        rows,
        (
            Column(
                "sku",
                each(f"SKU-{number:05d}" for number in sorted(rng.sample(range(1, 99_999), rows))),
            ),
            Column(
                "product",
                lambda row: f"{rng.choice(PRODUCTS)} {rng.choice('ABCDEFGH')}{rng.randint(1, 9)}",
                dirt=lambda row: padded(rng, row["product"]) if padded_products else row["product"],
                rules=lambda card: (
                    card.state("trimmed", col="product") if padded_products else None
                ),
                repair=lambda: [act("strip", column="product")] if padded_products else [],
            ),
            treated("warehouse", lambda row: rng.choice(WAREHOUSES), warehouses),
            Column(
                "on_hand",
                lambda row: 0 if rng.random() < 0.1 else rng.randint(1, 25_000),
                dirt=lambda row: counts.render(
                    -rng.randint(1, 50) if row["sku"] in misread else row["on_hand"]
                ),
                dtype="typed",
                typed_export=not counts.as_text,
                faults=misreads,
                rules=on_hand_rules,
                repair=lambda: [
                    *counts.steps("on_hand"),
                    *(
                        [act("clamp_outliers", column="on_hand", low=0, high=1e9)]
                        if has_misreads
                        else []
                    ),
                ],
                styled=True,
            ),
            Column(
                "unit_cost",
                lambda row: round(rng.uniform(0.5, 4_000), 2),
                dirt=lambda row: costs.render(row["unit_cost"]),
                dtype="typed",
                typed_export=not costs.as_text,
                rules=lambda card: state_cast(card, "unit_cost", Kind.FLOAT),
                repair=lambda: costs.steps("unit_cost"),
                styled=True,
            ),
            Column(
                "reorder_level",  # the tokens mean 0
                lambda row: 0 if rng.random() < rate else rng.choice([10, 25, 50, 100, 500]),
                dirt=lambda row: (
                    tokens.render() if row["reorder_level"] == 0 else str(row["reorder_level"])
                ),
                dtype="typed",
                rules=reorder_rules,
                repair=lambda: [
                    *tokens.steps("reorder_level"),
                    act("fix_dtype", column="reorder_level", dtype="int"),
                ],
            ),
            treated("discontinued", lambda row: rng.random() < 0.15, flags, "typed"),
            treated(
                "counted_on",
                lambda row: dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(365)),
                dates,
                dates.dtype,
            ),
        ),
        copies=Copies(max(1, round(rows * rate / 3)) if has_copies else 0, exact=False, key="sku"),
        style=style,
        dirt_order=("on_hand", COLUMNS),
        plan_order=("copies", COLUMNS),
    )
    dirty, clean = table.generate()
    table.state(card)
    description = card.text(
        f"Warehouse stock count ({len(dirty)} rows, {difficulty}).",
        "sku is the protected key and the row id. You may send a whole program of operations "
        "in one step.",
    )
    plan = (act("program", operations=table.plan()),)
    return Generated(dirty, clean, "sku", description, 30, OPERATIONS, plan, difficulty=difficulty)
