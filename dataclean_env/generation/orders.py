"""orders: an order export (DataClean-RL domain); a whole program may be sent in one step.

Dirt, chosen per instance: statuses written in the instance's case (lower, UPPER or Title)
with casing noise and one-off variant spellings, order dates in the instance's day/month
order and separator (gold ISO text or a datetime), quantities and prices as text in the
instance's number style (or already typed), prices typed with three extra zeros above the
card's price cap, a customer name misspelt in a minority of that customer's orders (a
functional-dependency violation), and exact duplicate rows. Totals of returned orders are
negative and zero-quantity lines exist: both are real and must be preserved.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.card import Card
from dataclean_env.generation.noise import full_name, padded, pick_difficulty, shuffled_with
from dataclean_env.generation.pools import PRODUCTS
from dataclean_env.generation.treatments import (
    Aliases,
    Dates,
    Numbers,
    act,
    number_style,
    present,
    state_cast,
    state_style,
)
from dataclean_env.table.values import Kind

STATUSES = ("shipped", "pending", "delivered", "cancelled", "returned")
PRICE_CAPS = (1500, 2000, 2500, 5000)
OPERATIONS = (
    "strip",
    "lower",
    "upper",
    "title",
    "map",
    "normalize_dates",
    "regex_replace",
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

# Bumped whenever what a seed produces changes (tests/unit/generation/test_generator_versions.py).
VERSION = 2


def _misspelt(rng: random.Random, name: str) -> str:
    at = rng.randrange(1, len(name) - 1)
    return name[:at] + name[at + 1 :]  # one letter lost, as typed in a hurry


def generate(rng: random.Random) -> Generated:
    difficulty, rows, rate = pick_difficulty(rng)
    card = Card(rng, difficulty)
    case = rng.choice(["lower", "upper", "title"])  # how this export's statuses are written
    status_names = [getattr(str, case)(s) for s in STATUSES]
    statuses = Aliases(rng, card, status_names)
    dates = Dates(rng, card, ("text", "datetime"))
    style = number_style(rng)
    quantities = Numbers(rng, difficulty, style, Kind.INT)
    prices = Numbers(rng, difficulty, style, Kind.FLOAT)
    cap = rng.choice(PRICE_CAPS)
    cased, has_copies = present(rng, difficulty), present(rng, difficulty)
    has_misspelt, has_capped = present(rng, difficulty), present(rng, difficulty)
    customers = {cid: full_name(rng) for cid in rng.sample(range(500, 999), max(3, rows // 4))}
    order_ids = sorted(rng.sample(range(200_000, 299_999), rows))
    clean_rows = []
    for order_id in order_ids:
        status = rng.choice(status_names)
        quantity = 0 if rng.random() < 0.05 else rng.randint(1, 2500)
        price = round(rng.uniform(1, cap - 1), 2)
        # "+ 0.0" turns the -0.0 of a returned zero-quantity line into 0.0.
        total = round(quantity * price * (-1 if status.lower() == "returned" else 1), 2) + 0.0
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
    counts: dict[int, list[dict[str, Any]]] = {}
    for row in clean_rows:
        counts.setdefault(row["customer_id"], []).append(row)
    # Customers with at least three orders can have one misspelt: the majority stays right.
    misspelt = {
        rng.choice(group)["order_id"]
        for group in counts.values()
        if has_misspelt and len(group) >= 3 and rng.random() < rate * 2
    }
    # Three extra zeros must take a price over the cap: only prices above cap/1000 qualify.
    cappable = [row for row in clean_rows if row["unit_price"] * 1000 > cap]
    capped = (
        {row["order_id"] for row in rng.sample(cappable, max(1, round(rows * rate / 5)))}
        if has_capped
        else set()
    )

    def dirty_row(row: dict[str, Any]) -> dict[str, Any]:
        status = statuses.render(row["status"])
        if status == row["status"] and cased and rng.random() < rate:
            wrong = [v for v in (status.lower(), status.upper(), status.title()) if v != status]
            status = padded(rng, rng.choice(wrong))
        price = row["unit_price"] * (1000 if row["order_id"] in capped else 1)
        return {
            **row,
            "customer_name": _misspelt(rng, row["customer_name"])
            if row["order_id"] in misspelt
            else row["customer_name"],
            "status": status,
            "order_date": dates.render(row["order_date"]),
            "quantity": quantities.render(row["quantity"]),
            "unit_price": prices.render(price),
        }

    dirty_rows = [dirty_row(row) for row in clean_rows]
    copies = (
        [dict(row) for row in rng.sample(dirty_rows, max(1, round(rows * rate / 4)))]
        if has_copies
        else []
    )
    dirty = pd.DataFrame(shuffled_with(rng, dirty_rows, copies))
    dirty = dirty.astype({c: "str" for c in ("customer_name", "product", "status", "order_date")})
    clean = pd.DataFrame(clean_rows)
    clean["unit_price"] = clean["unit_price"].where(~clean["order_id"].isin(capped), float(cap))
    clean["order_date"] = [dates.gold(d) for d in clean["order_date"]]
    clean = clean.astype({c: "str" for c in ("customer_name", "product", "status")})
    if dates.target == "datetime":
        clean["order_date"] = pd.to_datetime(clean["order_date"])
    else:
        clean = clean.astype({"order_date": "str"})

    if cased:
        card.state(case, col="status")
    statuses.state(card, "status")
    dates.state(card, "order_date")
    if quantities.as_text or prices.as_text:
        state_style(card, style)
    state_cast(card, "quantity", Kind.INT)
    card.state("zero_real", col="quantity")
    if has_capped:
        card.state("cap", col="unit_price", high=str(cap))
    else:
        state_cast(card, "unit_price", Kind.FLOAT)
    if has_misspelt:
        card.state("fd", key="customer_id", col="customer_name")
    if has_copies:
        card.state("exact_duplicates")
    description = card.text(
        f"Order export ({len(dirty)} rows, {difficulty}).",
        "total is already right (negative totals are refunds: keep them). order_id is the "
        "protected key and the row id. You may send a whole program of operations in one step.",
    )
    steps = [
        *([act("remove_duplicates")] if has_copies else []),
        *statuses.steps("status"),  # before lower: the variants are mapped as written
        *([act("strip", column="status"), act(case, column="status")] if cased else []),
        *dates.steps("order_date"),
        *quantities.steps("quantity"),
        *prices.steps("unit_price"),
        *([act("clamp_outliers", column="unit_price", low=0, high=cap)] if has_capped else []),
        *([act("fd_repair", key="customer_id", column="customer_name")] if has_misspelt else []),
    ]
    plan = (act("program", operations=steps),)
    return Generated(
        dirty, clean, "order_id", description, 25, OPERATIONS, plan, difficulty=difficulty
    )
