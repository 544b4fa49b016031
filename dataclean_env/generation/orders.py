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

from dataclean_env.generation import Generated
from dataclean_env.generation.card import Card
from dataclean_env.generation.columns import (
    COLUMNS,
    Column,
    Copies,
    Table,
    TableRule,
    each,
    treated,
)
from dataclean_env.generation.noise import full_name, padded, pick_difficulty
from dataclean_env.generation.pools import PRODUCTS
from dataclean_env.generation.treatments import (
    Aliases,
    Dates,
    Numbers,
    act,
    number_style,
    present,
    state_cast,
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
    misspelt: set[int] = set()
    capped: set[int] = set()

    def misspell(rows: list[dict[str, Any]]) -> None:
        counts: dict[int, list[dict[str, Any]]] = {}
        for row in rows:
            counts.setdefault(row["customer_id"], []).append(row)
        # Customers with at least three orders can have one misspelt: the majority stays right.
        misspelt.update(
            rng.choice(group)["order_id"]
            for group in counts.values()
            if has_misspelt and len(group) >= 3 and rng.random() < rate * 2
        )

    def cap_some(rows: list[dict[str, Any]]) -> None:
        # Three extra zeros must take a price over the cap: only prices above cap/1000 qualify.
        cappable = [row for row in rows if row["unit_price"] * 1000 > cap]
        if has_capped:
            chosen = rng.sample(cappable, max(1, round(len(rows) * rate / 5)))
            capped.update(row["order_id"] for row in chosen)

    def status_dirt(row: dict[str, Any]) -> str:
        status: str = statuses.render(row["status"])
        if status == row["status"] and cased and rng.random() < rate:
            wrong = [v for v in (status.lower(), status.upper(), status.title()) if v != status]
            status = padded(rng, rng.choice(wrong))
        return status

    def status_rules(card: Card) -> None:
        if cased:
            card.state(case, col="status")
        statuses.state(card, "status")

    def quantity_rules(card: Card) -> None:
        state_cast(card, "quantity", Kind.INT)
        card.state("zero_real", col="quantity")

    def total(row: dict[str, Any]) -> float:
        sign = -1 if row["status"].lower() == "returned" else 1
        # "+ 0.0" turns the -0.0 of a returned zero-quantity line into 0.0.
        value: float = round(row["quantity"] * row["unit_price"] * sign, 2) + 0.0
        return value

    table = Table(
        rng,
        rows,
        (
            Column(
                "order_id",
                each(sorted(rng.sample(range(200_000, 299_999), rows))),
                dtype="typed",
                typed_export=True,
            ),
            Column(
                "customer_id",
                lambda row: rng.choice(sorted(customers)),
                dtype="typed",
                typed_export=True,
            ),
            Column(
                "customer_name",
                lambda row: customers[row["customer_id"]],
                dirt=lambda row: (
                    _misspelt(rng, row["customer_name"])
                    if row["order_id"] in misspelt
                    else row["customer_name"]
                ),
                faults=misspell,
            ),
            Column("product", lambda row: rng.choice(PRODUCTS)),
            Column(
                "status",
                lambda row: rng.choice(status_names),
                dirt=status_dirt,
                rules=status_rules,
                repair=lambda: [  # the variants are mapped as written, before the case
                    *statuses.steps("status"),
                    *([act("strip", column="status"), act(case, column="status")] if cased else []),
                ],
            ),
            treated(
                "order_date",
                lambda row: dt.date(2023, 1, 1) + dt.timedelta(days=rng.randrange(700)),
                dates,
                dates.dtype,
            ),
            Column(
                "quantity",
                lambda row: 0 if rng.random() < 0.05 else rng.randint(1, 2500),
                dirt=lambda row: quantities.render(row["quantity"]),
                dtype="typed",
                typed_export=not quantities.as_text,
                rules=quantity_rules,
                repair=lambda: quantities.steps("quantity"),
                styled=True,
            ),
            Column(
                "unit_price",
                lambda row: round(rng.uniform(1, cap - 1), 2),
                dirt=lambda row: prices.render(
                    row["unit_price"] * (1000 if row["order_id"] in capped else 1)
                ),
                gold=lambda row: float(cap) if row["order_id"] in capped else row["unit_price"],
                dtype="typed",
                typed_export=not prices.as_text,
                faults=cap_some,
                rules=lambda card: (
                    card.state("cap", col="unit_price", high=str(cap))
                    if has_capped
                    else state_cast(card, "unit_price", Kind.FLOAT)
                ),
                repair=lambda: [
                    *prices.steps("unit_price"),
                    *(
                        [act("clamp_outliers", column="unit_price", low=0, high=cap)]
                        if has_capped
                        else []
                    ),
                ],
                styled=True,
            ),
            Column("total", total, dtype="typed", typed_export=True),
        ),
        (
            TableRule(
                "fd",
                lambda card: (
                    card.state("fd", key="customer_id", col="customer_name")
                    if has_misspelt
                    else None
                ),
                lambda: (
                    [act("fd_repair", key="customer_id", column="customer_name")]
                    if has_misspelt
                    else []
                ),
            ),
        ),
        copies=Copies(
            max(1, round(rows * rate / 4)) if has_copies else 0, exact=True, key="order_id"
        ),
        style=style,
        draw_order=(
            "order_id",
            "status",
            "quantity",
            "unit_price",
            "total",
            "customer_id",
            COLUMNS,
        ),
        dirt_order=("status", "customer_name", COLUMNS),
        plan_order=("copies", COLUMNS, "fd"),
    )
    dirty, clean = table.generate()
    table.state(card)
    description = card.text(
        f"Order export ({len(dirty)} rows, {difficulty}).",
        "total is already right (negative totals are refunds: keep them). order_id is the "
        "protected key and the row id. You may send a whole program of operations in one step.",
    )
    plan = (act("program", operations=table.plan()),)
    return Generated(
        dirty, clean, "order_id", description, 25, OPERATIONS, plan, difficulty=difficulty
    )
