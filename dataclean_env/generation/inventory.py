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

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.card import Card
from dataclean_env.generation.noise import padded, pick_difficulty, shuffled_with
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
    state_style,
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
    clean_rows = [
        {
            "sku": f"SKU-{number:05d}",
            "product": f"{rng.choice(PRODUCTS)} {rng.choice('ABCDEFGH')}{rng.randint(1, 9)}",
            "warehouse": rng.choice(WAREHOUSES),
            "on_hand": 0 if rng.random() < 0.1 else rng.randint(1, 25_000),
            "unit_cost": round(rng.uniform(0.5, 4_000), 2),
            "reorder_level": 0 if rng.random() < rate else rng.choice([10, 25, 50, 100, 500]),
            "discontinued": rng.random() < 0.15,
            "counted_on": dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(365)),
        }
        for number in sorted(rng.sample(range(1, 99_999), rows))
    ]
    # Misread shelves are empty ones: gold says 0, the export a small negative count.
    misread = (
        {row["sku"] for row in rng.sample(clean_rows, max(1, round(rows * rate / 5)))}
        if has_misreads
        else set()
    )
    for row in clean_rows:
        if row["sku"] in misread:
            row["on_hand"] = 0

    def dirty_row(row: dict[str, Any]) -> dict[str, Any]:
        on_hand = -rng.randint(1, 50) if row["sku"] in misread else row["on_hand"]
        return {
            "sku": row["sku"],
            "product": padded(rng, row["product"]) if padded_products else row["product"],
            "warehouse": warehouses.render(row["warehouse"]),
            "on_hand": counts.render(on_hand),
            "unit_cost": costs.render(row["unit_cost"]),
            "reorder_level": (
                tokens.render() if row["reorder_level"] == 0 else str(row["reorder_level"])
            ),
            "discontinued": flags.render(row["discontinued"]),
            "counted_on": dates.render(row["counted_on"]),
        }

    firsts = [dirty_row(row) for row in clean_rows]
    copies = (
        [dirty_row(row) for row in rng.sample(clean_rows, max(1, round(rows * rate / 3)))]
        if has_copies
        else []
    )
    dirty = pd.DataFrame(shuffled_with(rng, firsts, copies))
    typed = {c for c, n in (("on_hand", counts), ("unit_cost", costs)) if not n.as_text}
    dirty = dirty.astype({c: "str" for c in dirty.columns if c not in typed})
    clean = pd.DataFrame(clean_rows)
    clean["counted_on"] = [dates.gold(d) for d in clean["counted_on"]]
    if dates.target == "datetime":
        clean["counted_on"] = pd.to_datetime(clean["counted_on"])
    clean = clean.astype({c: "str" for c in ("sku", "product", "warehouse")})
    if dates.target == "text":
        clean = clean.astype({"counted_on": "str"})

    if padded_products:
        card.state("trimmed", col="product")
    warehouses.state(card, "warehouse")
    if counts.as_text or costs.as_text:
        state_style(card, style)
    if has_misreads:
        card.state("floor0_int", col="on_hand")
    else:
        state_cast(card, "on_hand", Kind.INT)
    state_cast(card, "unit_cost", Kind.FLOAT)
    state_cast(card, "reorder_level", Kind.INT)
    tokens.state(card, "reorder_level")
    flags.state(card, "discontinued")
    dates.state(card, "counted_on")
    if has_copies:
        card.state("dedupe_key", key="sku")
    description = card.text(
        f"Warehouse stock count ({len(dirty)} rows, {difficulty}).",
        "sku is the protected key and the row id. You may send a whole program of operations "
        "in one step.",
    )
    steps = [
        *([act("dedupe", keys=["sku"])] if has_copies else []),
        *([act("strip", column="product")] if padded_products else []),
        *warehouses.steps("warehouse"),
        *counts.steps("on_hand"),
        *([act("clamp_outliers", column="on_hand", low=0, high=1e9)] if has_misreads else []),
        *costs.steps("unit_cost"),
        *tokens.steps("reorder_level"),
        act("fix_dtype", column="reorder_level", dtype="int"),
        *flags.steps("discontinued"),
        *dates.steps("counted_on"),
    ]
    plan = (act("program", operations=steps),)
    return Generated(dirty, clean, "sku", description, 30, OPERATIONS, plan, difficulty=difficulty)
