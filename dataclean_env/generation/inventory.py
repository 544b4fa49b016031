"""inventory: a warehouse stock count (DataClean-RL domain); programs allowed in one step.

Dirt: padded product names, warehouse names written as codes or in lower case (two one-off
aliases per instance), stock counts with thousands separators in US or EU style and a few
negative scanner misreads, unit costs as currency text, reorder levels left as null-like
tokens (the card says a missing level means 0), discontinued flags as words, count dates in
this instance's day/month order, and near-duplicate rows of the same SKU. Zero stock is real.
"""

from __future__ import annotations

import datetime as dt
import random

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.noise import (
    BOOL_WORDS,
    NULL_TOKENS,
    aliases_for,
    count,
    date_order,
    described_mapping,
    money,
    padded,
    pick_difficulty,
    shuffled_with,
    written_date,
)
from dataclean_env.generation.pools import PRODUCTS
from dataclean_env.operations.formats import eu_number_steps

WAREHOUSES = {
    "Berlin DC": ("BER", "berlin", "Bln DC"),
    "Lagos Hub": ("LOS", "lagos", "Lagos hub"),
    "Osaka Depot": ("OSA", "osaka", "Osaka dpt"),
    "Toronto Yard": ("YYZ", "toronto", "Tor. Yard"),
    "Lima Store": ("LIM", "lima", "Lima st"),
}
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


def generate(rng: random.Random) -> Generated:
    difficulty, rows, rate = pick_difficulty(rng)
    convention = rng.choice(["us", "eu"])
    style = rng.choice(["us", "eu"])
    yes, no = rng.choice(BOOL_WORDS)
    aliases = aliases_for(rng, WAREHOUSES)
    alias_of = {value: alias for alias, value in aliases.items()}
    clean_rows = [
        {
            "sku": f"SKU-{number:05d}",
            "product": f"{rng.choice(PRODUCTS)} {rng.choice('ABCDEFGH')}{rng.randint(1, 9)}",
            "warehouse": rng.choice(sorted(WAREHOUSES)),
            "on_hand": 0 if rng.random() < 0.1 else rng.randint(1, 25_000),
            "unit_cost": round(rng.uniform(0.5, 4_000), 2),
            "reorder_level": 0 if rng.random() < rate else rng.choice([10, 25, 50, 100, 500]),
            "discontinued": rng.random() < 0.15,
            "counted_on": dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(365)),
        }
        for number in sorted(rng.sample(range(1, 99_999), rows))
    ]
    # Misread shelves are empty ones: gold says 0, the export a small negative count.
    misread = {row["sku"] for row in rng.sample(clean_rows, max(1, round(rows * rate / 5)))}
    for row in clean_rows:
        if row["sku"] in misread:
            row["on_hand"] = 0

    def dirty_row(row: dict) -> dict:
        warehouse = row["warehouse"]
        if warehouse in alias_of and rng.random() < 0.6:
            warehouse = alias_of[warehouse]
        on_hand = -rng.randint(1, 50) if row["sku"] in misread else row["on_hand"]
        return {
            "sku": row["sku"],
            "product": padded(rng, row["product"]),
            "warehouse": warehouse,
            "on_hand": count(on_hand, style),
            "unit_cost": money(row["unit_cost"], style),
            "reorder_level": (
                rng.choice(NULL_TOKENS) if row["reorder_level"] == 0 else str(row["reorder_level"])
            ),
            "discontinued": yes if row["discontinued"] else no,
            "counted_on": written_date(rng, row["counted_on"], convention),
        }

    copies = [dirty_row(row) for row in rng.sample(clean_rows, max(1, round(rows * rate / 3)))]
    dirty = pd.DataFrame(shuffled_with(rng, [dirty_row(row) for row in clean_rows], copies))
    dirty = dirty.astype("str")
    clean = pd.DataFrame(clean_rows)
    clean["counted_on"] = [d.isoformat() for d in clean["counted_on"]]
    clean = clean.astype({c: "str" for c in ("sku", "product", "warehouse", "counted_on")})
    numbers = (
        "US style (1,234 and $1,234.50)" if style == "us" else "EU style (1.234 and 1.234,50 €)"
    )
    description = (
        f"Warehouse stock count ({len(dirty)} rows, {difficulty}). Rules for this export: "
        f"product trimmed; warehouse spelled as one of {sorted(WAREHOUSES)} — in this export "
        f"{described_mapping(aliases)}; numbers are written {numbers}; on_hand an int — "
        "negative counts are scanner misreads of empty shelves: clamp to at least 0 (0 is "
        "real); unit_cost a float; reorder_level an int where the tokens "
        f"{list(NULL_TOKENS)} mean 0; discontinued a bool (written '{yes}'/'{no}'); "
        f"counted_on as ISO text — slashed dates are {date_order(convention)}. Some SKUs were "
        "counted twice: keep one row per sku. sku is the protected key and the row id. You "
        "may send a whole program of operations in one step."
    )
    to_numbers = (
        [*eu_number_steps("on_hand"), *eu_number_steps("unit_cost")] if style == "eu" else []
    )
    steps = [
        {"operation": "dedupe", "parameters": {"keys": ["sku"]}},
        {"operation": "strip", "parameters": {"column": "product"}},
        {"operation": "map", "parameters": {"column": "warehouse", "mapping": aliases}},
        *to_numbers,
        {"operation": "fix_dtype", "parameters": {"column": "on_hand", "dtype": "int"}},
        {"operation": "clamp_outliers", "parameters": {"column": "on_hand", "low": 0, "high": 1e9}},
        {"operation": "fix_dtype", "parameters": {"column": "unit_cost", "dtype": "float"}},
        {
            "operation": "replace_missing",
            "parameters": {"columns": ["reorder_level"], "tokens": list(NULL_TOKENS)},
        },
        {
            "operation": "fill_missing",
            "parameters": {"column": "reorder_level", "strategy": "constant", "value": "0"},
        },
        {"operation": "fix_dtype", "parameters": {"column": "reorder_level", "dtype": "int"}},
        {"operation": "fix_dtype", "parameters": {"column": "discontinued", "dtype": "bool"}},
        {
            "operation": "normalize_dates",
            "parameters": {"column": "counted_on", "convention": convention},
        },
    ]
    plan = ({"operation": "program", "parameters": {"operations": steps}},)
    return Generated(dirty, clean, "sku", description, 30, OPERATIONS, plan, difficulty=difficulty)
