"""crm: a customer CRM export (DataClean-RL domain); a whole program may be sent in one step.

Dirt: names with casing and whitespace noise, upper-cased emails, phones in five formats,
two one-off country aliases, null-like segment tokens, dates in this instance's day/month
order, lifetime values as US or EU currency text (zeros are real: keep them), near-duplicate
contacts, and test contacts (emails at test.invalid) that must be dropped by id.
"""

from __future__ import annotations

import datetime as dt
import random

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.noise import (
    NULL_TOKENS,
    aliases_for,
    date_order,
    described_mapping,
    full_name,
    money,
    noisy_name,
    noisy_phone,
    phone_digits,
    pick_difficulty,
    shuffled_with,
    us_phone,
    written_date,
)
from dataclean_env.operations.formats import eu_number_steps

COUNTRIES = {
    "United States": ("USA", "U.S.", "US of A"),
    "Germany": ("Deutschland", "DE", "Germny"),
    "France": ("FR", "Frankreich", "Fance"),
    "Brazil": ("Brasil", "BR"),
    "Japan": ("JP", "Nippon"),
    "Nigeria": ("NG", "Nigera"),
}
SEGMENTS = ("enterprise", "smb", "consumer")
TEST_DOMAIN = "test.invalid"
OPERATIONS = (
    "strip",
    "title",
    "lower",
    "phone_us",
    "map",
    "replace_missing",
    "normalize_dates",
    "regex_replace",
    "fix_dtype",
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
    aliases = aliases_for(rng, COUNTRIES)
    alias_of = {value: alias for alias, value in aliases.items()}
    ids = sorted(rng.sample(range(100_000, 999_999), rows))
    clean_rows = []
    for contact_id in ids:
        day = dt.date(2019, 1, 1) + dt.timedelta(days=rng.randrange(2000))
        clean_rows.append(
            {
                "contact_id": contact_id,
                "full_name": full_name(rng),
                "email": f"c{contact_id}@example.com",
                "phone": phone_digits(rng),
                "country": rng.choice(sorted(COUNTRIES)),
                "segment": rng.choice(SEGMENTS) if rng.random() > rate / 2 else None,
                "created_at": day,
                "lifetime_value": 0.0 if rng.random() < 0.1 else round(rng.uniform(5, 25_000), 2),
            }
        )
    tests = rng.sample(clean_rows, max(1, rows // 20))
    test_ids = {row["contact_id"] for row in tests}
    for row in tests:
        row["email"] = f"c{row['contact_id']}@{TEST_DOMAIN}"

    def dirty_row(row: dict) -> dict:
        country = row["country"]
        if country in alias_of and rng.random() < 0.6:
            country = alias_of[country]
        return {
            "contact_id": row["contact_id"],
            "full_name": noisy_name(rng, row["full_name"]),
            "email": row["email"].upper() if rng.random() < rate else row["email"],
            "phone": noisy_phone(rng, row["phone"]),
            "country": country,
            "segment": row["segment"] or rng.choice(NULL_TOKENS),
            "created_at": written_date(rng, row["created_at"], convention),
            "lifetime_value": money(row["lifetime_value"], style),
        }

    copies = [dirty_row(row) for row in rng.sample(clean_rows, max(1, round(rows * rate / 3)))]
    dirty_rows = shuffled_with(rng, [dirty_row(row) for row in clean_rows], copies)
    dirty = pd.DataFrame(dirty_rows).astype({c: "str" for c in dirty_rows[0] if c != "contact_id"})
    kept = [row for row in clean_rows if row["contact_id"] not in test_ids]
    clean = pd.DataFrame(
        {
            "contact_id": [r["contact_id"] for r in kept],
            "full_name": [r["full_name"] for r in kept],
            "email": [r["email"] for r in kept],
            "phone": [us_phone(r["phone"]) for r in kept],
            "country": [r["country"] for r in kept],
            "segment": pd.Series([r["segment"] for r in kept], dtype="str"),
            "created_at": [r["created_at"].isoformat() for r in kept],
            "lifetime_value": [r["lifetime_value"] for r in kept],
        }
    )
    currency = "US style ($1,234.50)" if style == "us" else "EU style (1.234,50 €)"
    description = (
        f"CRM contacts export ({len(dirty)} rows, {difficulty}). Rules for this export: "
        "full_name trimmed and in Title Case; email trimmed and lower case; phone written "
        "(XXX) XXX-XXXX; country spelled out in full — in this export "
        f"{described_mapping(aliases)}; segment tokens {list(NULL_TOKENS)} mean missing (leave "
        f"it empty); created_at as ISO text — slashed dates are {date_order(convention)}; "
        f"lifetime_value is written {currency} and must become a float (0 is a real value). "
        "Some contacts appear twice with small differences: keep one row per contact_id. "
        f"Contacts whose email is at {TEST_DOMAIN} are test records: drop them (drop_rows). "
        "contact_id is the protected key and the row id. You may send a whole program of "
        "operations in one step."
    )
    steps = [
        {"operation": "strip", "parameters": {}},
        {"operation": "title", "parameters": {"column": "full_name"}},
        {"operation": "lower", "parameters": {"column": "email"}},
        {"operation": "phone_us", "parameters": {"column": "phone"}},
        {"operation": "map", "parameters": {"column": "country", "mapping": aliases}},
        {
            "operation": "replace_missing",
            "parameters": {"columns": ["segment"], "tokens": list(NULL_TOKENS)},
        },
        {
            "operation": "normalize_dates",
            "parameters": {"column": "created_at", "convention": convention},
        },
        *(eu_number_steps("lifetime_value") if style == "eu" else []),
        {"operation": "fix_dtype", "parameters": {"column": "lifetime_value", "dtype": "float"}},
        {"operation": "dedupe", "parameters": {"keys": ["contact_id"]}},
    ]
    plan = (
        {"operation": "program", "parameters": {"operations": steps}},
        {"operation": "drop_rows", "parameters": {"row_ids": sorted(test_ids)}},
    )
    return Generated(
        dirty, clean, "contact_id", description, 30, OPERATIONS, plan, difficulty=difficulty
    )
