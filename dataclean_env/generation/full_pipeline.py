"""full_pipeline: employee records needing the whole pipeline, one operation per step.

Dirt, chosen per instance: exact duplicate rows, names with casing and whitespace noise
(gold Title Case or UPPER CASE; particle surnames must survive), placeholder department
tokens meaning the instance's fallback department, ages outside the card's range, hire
dates in the instance's day/month order with some 21xx century typos (gold ISO text or a
datetime), revenue in the instance's number style with a few impossible negatives, and
active flags in the instance's word pair. Zero revenue is real.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

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
from dataclean_env.generation.noise import pick_difficulty
from dataclean_env.generation.treatments import (
    Action,
    Dates,
    Flags,
    Names,
    Numbers,
    Tokens,
    act,
    number_style,
    present,
)
from dataclean_env.table.values import Kind

DEPARTMENTS = ("Sales", "Finance", "Engineering", "Support", "Marketing")
FALLBACKS = ("Unassigned", "General", "Pending Review")
OPERATIONS = (
    "remove_duplicates",
    "strip",
    "title",
    "upper",
    "map",
    "replace_missing",
    "fill_missing",
    "fix_dtype",
    "clamp_outliers",
    "normalize_dates",
    "regex_replace",
    "validate_schema",
    "finish",
)

# Bumped whenever what a seed produces changes (tests/unit/generation/test_generator_versions.py).
VERSION = 2


def generate(rng: random.Random) -> Generated:
    difficulty, rows, rate = pick_difficulty(rng)
    card = Card(rng, difficulty)
    youngest, oldest = rng.choice([(18, 67), (18, 70), (16, 75), (21, 65)])
    fallback = rng.choice(FALLBACKS)
    names, flags, tokens = Names(rng, difficulty), Flags(rng, difficulty), Tokens(rng, fallback)
    dates = Dates(rng, card, ("text", "datetime"))
    style = number_style(rng)
    ages, revenues = (
        Numbers(rng, difficulty, "plain", Kind.INT),
        Numbers(rng, difficulty, style, Kind.FLOAT),
    )
    has_copies, has_ages = present(rng, difficulty), present(rng, difficulty)
    has_future, has_negative = present(rng, difficulty), present(rng, difficulty)
    broken = max(1, round(rows * rate / 4))
    too_old: set[int] = set()
    too_young: set[int] = set()
    future: set[int] = set()
    negative: set[int] = set()

    def some(flag: bool, rows: list[dict[str, Any]]) -> set[int]:
        return {r["employee_id"] for r in rng.sample(rows, broken)} if flag else set()

    # Gold holds what the constraints make of the broken values.
    def age_faults(rows: list[dict[str, Any]]) -> None:
        too_old.update(some(has_ages, rows))
        too_young.update(some(has_ages, rows) - too_old)
        for row in rows:
            if row["employee_id"] in too_old:
                row["age"] = oldest
            if row["employee_id"] in too_young:
                row["age"] = youngest

    def revenue_faults(rows: list[dict[str, Any]]) -> None:
        negative.update(some(has_negative, rows))
        for row in rows:
            if row["employee_id"] in negative:
                row["revenue"] = 0.0

    def age_dirt(row: dict[str, Any]) -> Any:
        age = row["age"]
        if row["employee_id"] in too_old:
            age = rng.choice([oldest + rng.randint(5, 40), 999])
        elif row["employee_id"] in too_young:
            age = rng.randint(0, youngest - 1)
        return ages.render(age)

    def hired_dirt(row: dict[str, Any]) -> str:
        hired: dt.date = row["hire_date"]
        if row["employee_id"] in future:
            hired = hired.replace(year=hired.year + 100)
        return dates.render(hired)

    def hired_rules(card: Card) -> None:
        dates.state(card, "hire_date")
        if has_future:
            card.state("century", col="hire_date")

    def hired_repair() -> list[Action]:
        steps = dates.steps("hire_date")
        century = act(
            "regex_replace", column="hire_date", pattern=r"^21(\d\d)", replacement=r"20\1"
        )
        return [
            *[s for s in steps if s["operation"] != "fix_dtype"],
            *([century] if has_future else []),
            *[s for s in steps if s["operation"] == "fix_dtype"],
        ]

    table = Table(
        rng,
        rows,
        (
            Column(
                "employee_id",
                each(sorted(rng.sample(range(10_000, 99_999), rows))),
                dtype="typed",
                typed_export=True,
            ),
            treated("name", lambda row: names.draw(), names),
            Column(
                "department",
                lambda row: fallback if rng.random() < rate / 2 else rng.choice(DEPARTMENTS),
                dirt=lambda row: (
                    tokens.render() if row["department"] == fallback else row["department"]
                ),
                rules=lambda card: tokens.state(card, "department"),
                repair=lambda: tokens.steps("department"),
            ),
            Column(
                "age",
                lambda row: rng.randint(youngest, oldest),
                dirt=age_dirt,
                dtype="typed",
                typed_export=not ages.as_text,
                faults=age_faults,
                rules=lambda card: (
                    card.state("within", col="age", low=str(youngest), high=str(oldest))
                    if has_ages
                    else card.state(
                        "cast",
                        col="age",
                        kind=Kind.INT,
                        a_kind="an int",
                        kind_varied="whole numbers",
                    )
                ),
                repair=lambda: [
                    *ages.steps("age"),
                    *(
                        [act("clamp_outliers", column="age", low=youngest, high=oldest)]
                        if has_ages
                        else []
                    ),
                ],
            ),
            Column(
                "hire_date",  # future dates are century typos
                lambda row: dt.date(2010, 1, 1) + dt.timedelta(days=rng.randrange(5400)),
                dirt=hired_dirt,
                gold=lambda row: dates.gold(row["hire_date"]),
                dtype=dates.dtype,
                faults=lambda rows: future.update(some(has_future, rows)),
                rules=hired_rules,
                repair=hired_repair,
            ),
            Column(
                "revenue",
                lambda row: 0.0 if rng.random() < 0.08 else round(rng.uniform(100, 900_000), 2),
                dirt=lambda row: revenues.render(
                    -round(rng.uniform(1, 5000), 2)
                    if row["employee_id"] in negative
                    else row["revenue"]
                ),
                dtype="typed",
                typed_export=not revenues.as_text,
                faults=revenue_faults,
                rules=lambda card: (
                    card.state("floor0", col="revenue")
                    if has_negative
                    else card.state(
                        "cast",
                        col="revenue",
                        kind=Kind.FLOAT,
                        a_kind="a float",
                        kind_varied="decimals",
                    )
                ),
                repair=lambda: [
                    *revenues.steps("revenue"),
                    *(
                        [act("clamp_outliers", column="revenue", low=0, high=1e12)]
                        if has_negative
                        else []
                    ),
                ],
                styled=True,
            ),
            treated("active", lambda row: rng.random() < 0.8, flags, "typed"),
        ),
        (STRIP,),
        copies=Copies(
            max(1, round(rows * rate / 4)) if has_copies else 0, exact=True, key="employee_id"
        ),
        style=style,
        dirt_order=("age", "revenue", COLUMNS),
        card_order=("copies", COLUMNS),
        plan_order=("copies", "strip", COLUMNS),
    )
    dirty, clean = table.generate()
    table.state(card)
    description = card.text(
        f"Employee records ({len(dirty)} rows, {difficulty}) that need the whole pipeline.",
        "employee_id is the protected key. One operation per step.",
    )
    return Generated(
        dirty,
        clean,
        "employee_id",
        description,
        20,
        OPERATIONS,
        tuple(table.plan()),
        difficulty=difficulty,
    )
