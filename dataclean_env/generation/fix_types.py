"""fix_types: every column but the key arrives as text; cast each to its type.

The rule card names each column's type and, when it differs per instance, how booleans are
written (yes/no, true/false, Y/N) — so no fixed sequence of casts solves every instance.
"""

from __future__ import annotations

import datetime as dt
import random

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.noise import BOOL_WORDS, pick_difficulty
from dataclean_env.generation.pools import FIRST_NAMES, LAST_NAMES, PRODUCTS


def generate(rng: random.Random) -> Generated:
    difficulty, rows, _ = pick_difficulty(rng)
    start = dt.date(2023, 1, 1)
    clean = pd.DataFrame(
        {
            "order_id": sorted(rng.sample(range(10_000, 99_999), rows)),
            "customer": [
                f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(rows)
            ],
            "product": [rng.choice(PRODUCTS) for _ in range(rows)],
            "quantity": [rng.choice([0, 1, 1, 2, 3, 5, 12]) for _ in range(rows)],
            "unit_price": [round(rng.uniform(-5, 400), 2) for _ in range(rows)],  # refunds < 0
            "paid": [rng.random() < 0.7 for _ in range(rows)],
            "ordered_on": pd.to_datetime(
                [start + dt.timedelta(days=rng.randrange(700)) for _ in range(rows)]
            ),
        }
    )
    yes, no = rng.choice(BOOL_WORDS)
    dirty = clean.copy()
    dirty["quantity"] = [str(v) for v in clean["quantity"]]
    dirty["unit_price"] = [f"{v:.2f}" for v in clean["unit_price"]]
    dirty["paid"] = [yes if v else no for v in clean["paid"]]
    dirty["ordered_on"] = [d.date().isoformat() for d in clean["ordered_on"]]
    for column in ("customer", "product", "quantity", "unit_price", "paid", "ordered_on"):
        dirty[column] = dirty[column].astype("str")
    description = (
        f"Sales transactions ({rows} rows, {difficulty}) where every column except order_id arrived as text. "
        f"Cast quantity to int, unit_price to float (negative prices are refunds: keep them), "
        f"paid to bool (written '{yes}'/'{no}'), ordered_on to datetime (ISO dates); "
        "customer and product stay text. order_id is the protected key."
    )
    casts = {"quantity": "int", "unit_price": "float", "paid": "bool", "ordered_on": "datetime"}
    plan = tuple(
        {"operation": "fix_dtype", "parameters": {"column": c, "dtype": d}}
        for c, d in casts.items()
    )
    operations = ("fix_dtype", "validate_schema", "finish")
    return Generated(
        dirty, clean, "order_id", description, 12, operations, plan, difficulty=difficulty
    )
