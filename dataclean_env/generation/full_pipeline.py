"""full_pipeline: employee records needing the whole pipeline, one operation per step.

Dirt: exact duplicate rows, names with casing and whitespace noise, null-like department
tokens (the card says which department they mean), ages as text with impossible values
outside the card's range, hire dates slashed in this instance's day/month order and some in
the future (a 21xx century typo), revenue as currency text with a few negative values that
break the non-negative constraint, and active flags as words. Zero revenue is real.
"""

from __future__ import annotations

import datetime as dt
import random

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.noise import (
    BOOL_WORDS,
    NULL_TOKENS,
    date_order,
    full_name,
    money,
    noisy_name,
    pick_difficulty,
    shuffled_with,
    written_date,
)

DEPARTMENTS = ("Sales", "Finance", "Engineering", "Support", "Marketing")
FALLBACKS = ("Unassigned", "General", "Pending Review")
OPERATIONS = (
    "remove_duplicates",
    "strip",
    "title",
    "replace_missing",
    "fill_missing",
    "fix_dtype",
    "clamp_outliers",
    "normalize_dates",
    "regex_replace",
    "validate_schema",
    "finish",
)


def generate(rng: random.Random) -> Generated:
    difficulty, rows, rate = pick_difficulty(rng)
    convention = rng.choice(["us", "eu"])
    youngest, oldest = rng.choice([(18, 67), (18, 70), (16, 75)])
    fallback = rng.choice(FALLBACKS)
    yes, no = rng.choice(BOOL_WORDS)
    clean_rows = [
        {
            "employee_id": employee_id,
            "name": full_name(rng),
            "department": fallback if rng.random() < rate / 2 else rng.choice(DEPARTMENTS),
            "age": rng.randint(youngest, oldest),
            "hire_date": dt.date(2010, 1, 1) + dt.timedelta(days=rng.randrange(5400)),
            "revenue": 0.0 if rng.random() < 0.08 else round(rng.uniform(100, 900_000), 2),
            "active": rng.random() < 0.8,
        }
        for employee_id in sorted(rng.sample(range(10_000, 99_999), rows))
    ]
    broken = max(1, round(rows * rate / 4))
    too_old = {r["employee_id"] for r in rng.sample(clean_rows, broken)}
    too_young = {r["employee_id"] for r in rng.sample(clean_rows, broken)} - too_old
    future = {r["employee_id"] for r in rng.sample(clean_rows, broken)}
    negative = {r["employee_id"] for r in rng.sample(clean_rows, broken)}
    for row in clean_rows:  # gold holds what the constraints make of the broken values
        if row["employee_id"] in too_old:
            row["age"] = oldest
        if row["employee_id"] in too_young:
            row["age"] = youngest
        if row["employee_id"] in negative:
            row["revenue"] = 0.0

    def dirty_row(row: dict) -> dict:
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
            "name": noisy_name(rng, row["name"]),
            "department": rng.choice(NULL_TOKENS)
            if row["department"] == fallback
            else row["department"],
            "age": str(age),
            "hire_date": written_date(rng, hired, convention),
            "revenue": money(revenue, "us"),
            "active": yes if row["active"] else no,
        }

    dirty_rows = [dirty_row(row) for row in clean_rows]
    copies = [dict(row) for row in rng.sample(dirty_rows, max(1, round(rows * rate / 4)))]
    dirty = pd.DataFrame(shuffled_with(rng, dirty_rows, copies))
    dirty = dirty.astype({c: "str" for c in dirty.columns if c != "employee_id"})
    clean = pd.DataFrame(clean_rows).astype({"name": "str", "department": "str"})
    clean["hire_date"] = pd.to_datetime(clean["hire_date"])
    description = (
        f"Employee records ({len(dirty)} rows, {difficulty}) that need the whole pipeline. "
        "Rules for this table: drop exact duplicate rows; name trimmed and in Title Case; "
        f"department tokens {list(NULL_TOKENS)} mean '{fallback}'; age an int within "
        f"{youngest}..{oldest} — values outside are entry errors: clamp them into the range; "
        f"hire_date a datetime — slashed dates are {date_order(convention)}, and dates in the "
        "future are century typos (21xx for 20xx); revenue a float that cannot be negative: "
        f"clamp negatives to 0 (0 is real); active a bool (written '{yes}'/'{no}'). "
        "employee_id is the protected key. One operation per step."
    )
    plan = (
        {"operation": "remove_duplicates", "parameters": {}},
        {"operation": "strip", "parameters": {}},
        {"operation": "title", "parameters": {"column": "name"}},
        {
            "operation": "replace_missing",
            "parameters": {"columns": ["department"], "tokens": list(NULL_TOKENS)},
        },
        {
            "operation": "fill_missing",
            "parameters": {"column": "department", "strategy": "constant", "value": fallback},
        },
        {"operation": "fix_dtype", "parameters": {"column": "age", "dtype": "int"}},
        {
            "operation": "clamp_outliers",
            "parameters": {"column": "age", "low": youngest, "high": oldest},
        },
        {
            "operation": "normalize_dates",
            "parameters": {"column": "hire_date", "convention": convention},
        },
        {
            "operation": "regex_replace",
            "parameters": {"column": "hire_date", "pattern": r"^21(\d\d)", "replacement": r"20\1"},
        },
        {"operation": "fix_dtype", "parameters": {"column": "hire_date", "dtype": "datetime"}},
        {"operation": "fix_dtype", "parameters": {"column": "revenue", "dtype": "float"}},
        {
            "operation": "clamp_outliers",
            "parameters": {"column": "revenue", "low": 0, "high": 1e12},
        },
        {"operation": "fix_dtype", "parameters": {"column": "active", "dtype": "bool"}},
    )
    return Generated(
        dirty, clean, "employee_id", description, 20, OPERATIONS, plan, difficulty=difficulty
    )
