"""orders: an order export (DataClean-RL domain); a whole program may be sent in one step.

Dirt: statuses in mixed case with two one-off aliases, order dates in this instance's
day/month order, quantities and prices as text (prices with "$" and thousands separators),
a few prices typed with extra zeros above the card's price cap, a customer name misspelt in
a minority of that customer's orders (a functional-dependency violation), and exact
duplicate rows. Totals of returned orders are negative and zero-quantity lines exist: both
are real and must be preserved.
"""

from __future__ import annotations

import datetime as dt
import random

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.noise import (
    aliases_for,
    date_order,
    described_mapping,
    full_name,
    padded,
    pick_difficulty,
    shuffled_with,
    written_date,
)
from dataclean_env.generation.pools import PRODUCTS

STATUSES = {
    "shipped": ("snt", "dispatched", "shpd"),
    "pending": ("pend.", "awaiting", "open"),
    "delivered": ("dlvd", "received"),
    "cancelled": ("canceled", "void"),
    "returned": ("rtn", "refunded"),
}
PRICE_CAP = 2000
OPERATIONS = (
    "strip",
    "lower",
    "map",
    "normalize_dates",
    "fix_dtype",
    "clamp_outliers",
    "fd_repair",
    "remove_duplicates",
    "dedupe",
    "drop_rows",
    "set_cell",
    "show_rows",
    "program",
    "finish",
)


def _misspelt(rng: random.Random, name: str) -> str:
    at = rng.randrange(1, len(name) - 1)
    return name[:at] + name[at + 1 :]  # one letter lost, as typed in a hurry


def generate(rng: random.Random) -> Generated:
    difficulty, rows, rate = pick_difficulty(rng)
    convention = rng.choice(["us", "eu"])
    aliases = aliases_for(rng, STATUSES)
    alias_of = {value: alias for alias, value in aliases.items()}
    customers = {cid: full_name(rng) for cid in rng.sample(range(500, 999), max(3, rows // 4))}
    order_ids = sorted(rng.sample(range(200_000, 299_999), rows))
    clean_rows = []
    for order_id in order_ids:
        status = rng.choice(sorted(STATUSES))
        quantity = 0 if rng.random() < 0.05 else rng.randint(1, 40)
        price = round(rng.uniform(1, PRICE_CAP - 1), 2)
        # "+ 0.0" turns the -0.0 of a returned zero-quantity line into 0.0.
        total = round(quantity * price * (-1 if status == "returned" else 1), 2) + 0.0
        customer_id = rng.choice(sorted(customers))
        clean_rows.append(
            {
                "order_id": order_id,
                "customer_id": customer_id,
                "customer_name": customers[customer_id],
                "product": rng.choice(PRODUCTS),
                "status": status,
                "order_date": dt.date(2023, 1, 1) + dt.timedelta(days=rng.randrange(700)),
                "quantity": quantity,
                "unit_price": price,
                "total": total,
            }
        )
    counts: dict[int, list[dict]] = {}
    for row in clean_rows:
        counts.setdefault(row["customer_id"], []).append(row)
    # Customers with at least three orders can have one misspelt: the majority stays right.
    misspelt = {
        rng.choice(group)["order_id"]
        for group in counts.values()
        if len(group) >= 3 and rng.random() < rate * 2
    }
    capped = {row["order_id"] for row in rng.sample(clean_rows, max(1, round(rows * rate / 5)))}

    def dirty_row(row: dict) -> dict:
        status = row["status"]
        if status in alias_of and rng.random() < 0.5:
            status = alias_of[status]
        elif rng.random() < rate:
            status = rng.choice([status.upper(), status.title(), padded(rng, status)])
        price = row["unit_price"] * (1000 if row["order_id"] in capped else 1)
        return {
            **row,
            "customer_name": _misspelt(rng, row["customer_name"])
            if row["order_id"] in misspelt
            else row["customer_name"],
            "status": status,
            "order_date": written_date(rng, row["order_date"], convention),
            "quantity": str(row["quantity"]),
            "unit_price": f"${price:,.2f}",
        }

    dirty_rows = [dirty_row(row) for row in clean_rows]
    copies = [dict(row) for row in rng.sample(dirty_rows, max(1, round(rows * rate / 4)))]
    dirty = pd.DataFrame(shuffled_with(rng, dirty_rows, copies))
    dirty = dirty.astype({c: "str" for c in ("customer_name", "product", "status", "order_date")})
    clean = pd.DataFrame(clean_rows)
    clean["unit_price"] = clean["unit_price"].where(
        [r["order_id"] not in capped for r in clean_rows], float(PRICE_CAP)
    )
    clean["order_date"] = [d.isoformat() for d in clean["order_date"]]
    clean = clean.astype({c: "str" for c in ("customer_name", "product", "status", "order_date")})
    description = (
        f"Order export ({len(dirty)} rows, {difficulty}). Rules for this export: status in "
        f"lower case, one of {sorted(STATUSES)} — in this export {described_mapping(aliases)}; "
        f"order_date as ISO text — slashed dates are {date_order(convention)}; quantity an int "
        f"(0 is real); unit_price a float — a few prices were typed with three extra zeros: "
        f"clamp unit_price to at most {PRICE_CAP} (and at least 0); each customer_id has one "
        "customer_name: repair names that disagree with the customer's other orders; total is "
        "already right (negative totals are refunds: keep them). Some rows are exact "
        "duplicates: drop them. order_id is the protected key and the row id. You may send a "
        "whole program of operations in one step."
    )
    steps = [
        {"operation": "remove_duplicates", "parameters": {}},
        {"operation": "strip", "parameters": {"column": "status"}},
        {"operation": "lower", "parameters": {"column": "status"}},
        {"operation": "map", "parameters": {"column": "status", "mapping": aliases}},
        {
            "operation": "normalize_dates",
            "parameters": {"column": "order_date", "convention": convention},
        },
        {"operation": "fix_dtype", "parameters": {"column": "quantity", "dtype": "int"}},
        {"operation": "fix_dtype", "parameters": {"column": "unit_price", "dtype": "float"}},
        {
            "operation": "clamp_outliers",
            "parameters": {"column": "unit_price", "low": 0, "high": PRICE_CAP},
        },
        {"operation": "fd_repair", "parameters": {"key": "customer_id", "column": "customer_name"}},
    ]
    plan = ({"operation": "program", "parameters": {"operations": steps}},)
    return Generated(
        dirty, clean, "order_id", description, 25, OPERATIONS, plan, difficulty=difficulty
    )
