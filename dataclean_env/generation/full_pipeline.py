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

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.card import Card
from dataclean_env.generation.noise import pick_difficulty, shuffled_with
from dataclean_env.generation.treatments import (
    Dates,
    Flags,
    Names,
    Numbers,
    Tokens,
    act,
    number_style,
    present,
    state_style,
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
    clean_rows: list[dict[str, Any]] = [
        {
            "employee_id": employee_id,
            "name": names.draw(),
            "department": fallback if rng.random() < rate / 2 else rng.choice(DEPARTMENTS),
            "age": rng.randint(youngest, oldest),
            "hire_date": dt.date(2010, 1, 1) + dt.timedelta(days=rng.randrange(5400)),
            "revenue": 0.0 if rng.random() < 0.08 else round(rng.uniform(100, 900_000), 2),
            "active": rng.random() < 0.8,
        }
        for employee_id in sorted(rng.sample(range(10_000, 99_999), rows))
    ]
    broken = max(1, round(rows * rate / 4))

    def some(flag: bool) -> set[int]:
        return {r["employee_id"] for r in rng.sample(clean_rows, broken)} if flag else set()

    too_old = some(has_ages)
    too_young = some(has_ages) - too_old
    future, negative = some(has_future), some(has_negative)
    for row in clean_rows:  # gold holds what the constraints make of the broken values
        if row["employee_id"] in too_old:
            row["age"] = oldest
        if row["employee_id"] in too_young:
            row["age"] = youngest
        if row["employee_id"] in negative:
            row["revenue"] = 0.0

    def dirty_row(row: dict[str, Any]) -> dict[str, Any]:
        age = row["age"]
        if row["employee_id"] in too_old:
            age = rng.choice([oldest + rng.randint(5, 40), 999])
        elif row["employee_id"] in too_young:
            age = rng.randint(0, youngest - 1)
        hired = row["hire_date"]
        if row["employee_id"] in future:
            hired = hired.replace(year=hired.year + 100)
        revenue = (
            -round(rng.uniform(1, 5000), 2) if row["employee_id"] in negative else row["revenue"]
        )
        return {
            "employee_id": row["employee_id"],
            "name": names.render(row["name"]),
            "department": tokens.render() if row["department"] == fallback else row["department"],
            "age": ages.render(age),
            "hire_date": dates.render(hired),
            "revenue": revenues.render(revenue),
            "active": flags.render(row["active"]),
        }

    dirty_rows = [dirty_row(row) for row in clean_rows]
    copies = (
        [dict(row) for row in rng.sample(dirty_rows, max(1, round(rows * rate / 4)))]
        if has_copies
        else []
    )
    dirty = pd.DataFrame(shuffled_with(rng, dirty_rows, copies))
    typed = {"employee_id"} | {
        c for c, n in (("age", ages), ("revenue", revenues)) if not n.as_text
    }
    dirty = dirty.astype({c: "str" for c in dirty.columns if c not in typed})
    clean = pd.DataFrame(clean_rows).astype({"name": "str", "department": "str"})
    clean["name"] = [names.gold(n) for n in clean["name"]]
    clean["hire_date"] = [dates.gold(d) for d in clean["hire_date"]]
    if dates.target == "datetime":
        clean["hire_date"] = pd.to_datetime(clean["hire_date"])
    else:
        clean = clean.astype({"hire_date": "str"})

    if has_copies:
        card.state("exact_duplicates")
    names.state(card, "name")
    tokens.state(card, "department")
    if has_ages:
        card.state("within", col="age", low=str(youngest), high=str(oldest))
    else:
        card.state("cast", col="age", kind=Kind.INT, a_kind="an int", kind_varied="whole numbers")
    dates.state(card, "hire_date")
    if has_future:
        card.state("century", col="hire_date")
    if revenues.as_text:
        state_style(card, style)
    if has_negative:
        card.state("floor0", col="revenue")
    else:
        card.state("cast", col="revenue", kind=Kind.FLOAT, a_kind="a float", kind_varied="decimals")
    flags.state(card, "active")
    description = card.text(
        f"Employee records ({len(dirty)} rows, {difficulty}) that need the whole pipeline.",
        "employee_id is the protected key. One operation per step.",
    )
    plan = (
        *([act("remove_duplicates")] if has_copies else []),
        act("strip"),
        *names.steps("name"),
        *tokens.steps("department"),
        *ages.steps("age"),
        *([act("clamp_outliers", column="age", low=youngest, high=oldest)] if has_ages else []),
        *[s for s in dates.steps("hire_date") if s["operation"] != "fix_dtype"],
        *(
            [act("regex_replace", column="hire_date", pattern=r"^21(\d\d)", replacement=r"20\1")]
            if has_future
            else []
        ),
        *[s for s in dates.steps("hire_date") if s["operation"] == "fix_dtype"],
        *revenues.steps("revenue"),
        *([act("clamp_outliers", column="revenue", low=0, high=1e12)] if has_negative else []),
        *flags.steps("active"),
    )
    return Generated(
        dirty, clean, "employee_id", description, 20, OPERATIONS, plan, difficulty=difficulty
    )
