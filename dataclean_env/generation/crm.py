"""crm: a customer CRM export (DataClean-RL domain); a whole program may be sent in one step.

Dirt, chosen per instance: names with casing and whitespace noise (from medium up, surnames
with particles that arrive right and must survive), upper-cased emails, phones in five
formats (gold in the instance's own pattern), one to three variant country spellings,
per-instance placeholder tokens in segment, dates in the instance's day/month order (gold
ISO text or a datetime), lifetime values in the instance's number style (zeros are real),
near-duplicate contacts, and test contacts (at the instance's test domain) to drop by id.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pandas as pd

from dataclean_env.generation import Generated
from dataclean_env.generation.card import Card
from dataclean_env.generation.noise import phone_digits, pick_difficulty, shuffled_with
from dataclean_env.generation.treatments import (
    Aliases,
    Dates,
    Names,
    Numbers,
    Phones,
    Tokens,
    act,
    number_style,
    present,
    state_cast,
    state_style,
)
from dataclean_env.table.values import Kind

COUNTRIES = ("United States", "Germany", "France", "Brazil", "Japan", "Nigeria", "Canada", "India")
SEGMENTS = ("enterprise", "smb", "consumer")
TEST_DOMAINS = ("test.invalid", "example.test", "qa.invalid", "sandbox.test")
OPERATIONS = (
    "strip",
    "title",
    "upper",
    "lower",
    "phone_us",
    "map",
    "replace_missing",
    "fill_missing",
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

# Bumped whenever what a seed produces changes (tests/unit/generation/test_generator_versions.py).
VERSION = 2


def generate(rng: random.Random) -> Generated:
    difficulty, rows, rate = pick_difficulty(rng)
    card = Card(rng, difficulty)
    names, phones = Names(rng, difficulty), Phones(rng, difficulty)
    countries = Aliases(rng, card, list(COUNTRIES))
    tokens = Tokens(rng, None)
    dates = Dates(rng, card, ("text", "datetime"))
    style = number_style(rng)
    values = Numbers(rng, difficulty, style, Kind.FLOAT)
    upper_emails, has_copies = present(rng, difficulty), present(rng, difficulty)
    domain = rng.choice(TEST_DOMAINS)
    ids = sorted(rng.sample(range(100_000, 999_999), rows))
    clean_rows: list[dict[str, Any]] = []
    for contact_id in ids:
        clean_rows.append(
            {
                "contact_id": contact_id,
                "full_name": names.draw(),
                "email": f"c{contact_id}@example.com",
                "phone": phone_digits(rng),
                "country": rng.choice(COUNTRIES),
                "segment": rng.choice(SEGMENTS) if rng.random() > rate / 2 else None,
                "created_at": dt.date(2019, 1, 1) + dt.timedelta(days=rng.randrange(2000)),
                "lifetime_value": 0.0 if rng.random() < 0.1 else round(rng.uniform(5, 25_000), 2),
            }
        )
    tests = rng.sample(clean_rows, max(1, rows // 20))
    test_ids = {row["contact_id"] for row in tests}
    for row in tests:
        row["email"] = f"c{row['contact_id']}@{domain}"

    def dirty_row(row: dict[str, Any]) -> dict[str, Any]:
        return {
            "contact_id": row["contact_id"],
            "full_name": names.render(row["full_name"]),
            "email": row["email"].upper() if upper_emails and rng.random() < rate else row["email"],
            "phone": phones.render(row["phone"]),
            "country": countries.render(row["country"]),
            "segment": row["segment"] or tokens.render(),
            "created_at": dates.render(row["created_at"]),
            "lifetime_value": values.render(row["lifetime_value"]),
        }

    firsts = [dirty_row(row) for row in clean_rows]
    copies = (
        [dirty_row(row) for row in rng.sample(clean_rows, max(1, round(rows * rate / 3)))]
        if has_copies
        else []
    )
    dirty_rows = shuffled_with(rng, firsts, copies)
    typed = {"contact_id", "lifetime_value"} if not values.as_text else {"contact_id"}
    dirty = pd.DataFrame(dirty_rows).astype({c: "str" for c in dirty_rows[0] if c not in typed})
    kept = [row for row in clean_rows if row["contact_id"] not in test_ids]
    clean = pd.DataFrame(
        {
            "contact_id": [r["contact_id"] for r in kept],
            "full_name": [names.gold(r["full_name"]) for r in kept],
            "email": [r["email"] for r in kept],
            "phone": [phones.gold(r["phone"]) for r in kept],
            "country": [r["country"] for r in kept],
            "segment": pd.Series([r["segment"] for r in kept], dtype="str"),
            "created_at": [dates.gold(r["created_at"]) for r in kept],
            "lifetime_value": [r["lifetime_value"] for r in kept],
        }
    )
    if dates.target == "datetime":
        clean["created_at"] = pd.to_datetime(clean["created_at"])

    names.state(card, "full_name")
    if upper_emails:
        card.state("lower", col="email")
    phones.state(card, "phone")
    countries.state(card, "country")
    tokens.state(card, "segment")
    dates.state(card, "created_at")
    if values.as_text:
        state_style(card, style)
    state_cast(card, "lifetime_value", Kind.FLOAT)
    card.state("zero_real", col="lifetime_value")
    if has_copies:
        card.state("dedupe_key", key="contact_id")
    card.state("test_records", col="email", domain=domain)
    description = card.text(
        f"CRM contacts export ({len(dirty)} rows, {difficulty}).",
        "contact_id is the protected key and the row id. You may send a whole program of "
        "operations in one step.",
    )
    steps = [
        act("strip"),
        *names.steps("full_name"),
        *([act("lower", column="email")] if upper_emails else []),
        *phones.steps("phone"),
        *countries.steps("country"),
        *tokens.steps("segment"),
        *dates.steps("created_at"),
        *values.steps("lifetime_value"),
        *([act("dedupe", keys=["contact_id"])] if has_copies else []),
    ]
    plan = (
        act("program", operations=steps),
        act("drop_rows", row_ids=sorted(test_ids)),
    )
    return Generated(
        dirty, clean, "contact_id", description, 30, OPERATIONS, plan, difficulty=difficulty
    )
