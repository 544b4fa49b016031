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

from dataclean_env.generation import Generated
from dataclean_env.generation.card import Card
from dataclean_env.generation.columns import (
    COLUMNS,
    STRIP,
    Column,
    Copies,
    Table,
    TableRule,
    each,
    treated,
)
from dataclean_env.generation.noise import phone_digits, pick_difficulty
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
    test_ids: set[int] = set()

    def test_contacts(rows: list[dict[str, Any]]) -> None:
        for row in rng.sample(rows, max(1, len(rows) // 20)):
            test_ids.add(row["contact_id"])
            row["email"] = f"c{row['contact_id']}@{domain}"

    def lifetime_rules(card: Card) -> None:
        state_cast(card, "lifetime_value", Kind.FLOAT)
        card.state("zero_real", col="lifetime_value")

    table = Table(
        rng,
        rows,
        (
            Column(
                "contact_id",
                each(sorted(rng.sample(range(100_000, 999_999), rows))),
                dtype="typed",
                typed_export=True,
            ),
            treated("full_name", lambda row: names.draw(), names),
            Column(
                "email",
                lambda row: f"c{row['contact_id']}@example.com",
                dirt=lambda row: (
                    row["email"].upper() if upper_emails and rng.random() < rate else row["email"]
                ),
                faults=test_contacts,
                rules=lambda card: card.state("lower", col="email") if upper_emails else None,
                repair=lambda: [act("lower", column="email")] if upper_emails else [],
            ),
            treated("phone", lambda row: phone_digits(rng), phones),
            treated("country", lambda row: rng.choice(COUNTRIES), countries),
            Column(
                "segment",
                lambda row: rng.choice(SEGMENTS) if rng.random() > rate / 2 else None,
                dirt=lambda row: row["segment"] or tokens.render(),
                rules=lambda card: tokens.state(card, "segment"),
                repair=lambda: tokens.steps("segment"),
            ),
            treated(
                "created_at",
                lambda row: dt.date(2019, 1, 1) + dt.timedelta(days=rng.randrange(2000)),
                dates,
                dates.dtype,
            ),
            Column(
                "lifetime_value",
                lambda row: 0.0 if rng.random() < 0.1 else round(rng.uniform(5, 25_000), 2),
                dirt=lambda row: values.render(row["lifetime_value"]),
                dtype="typed",
                typed_export=not values.as_text,
                rules=lifetime_rules,
                repair=lambda: values.steps("lifetime_value"),
                styled=True,
            ),
        ),
        (
            STRIP,
            TableRule(
                "test records",  # dropped by id after the program
                lambda card: card.state("test_records", col="email", domain=domain),
            ),
        ),
        copies=Copies(
            max(1, round(rows * rate / 3)) if has_copies else 0, exact=False, key="contact_id"
        ),
        style=style,
        kept=lambda row: row["contact_id"] not in test_ids,
        card_order=(COLUMNS, "copies", "test records"),
        plan_order=("strip", COLUMNS, "copies"),
    )
    dirty, clean = table.generate()
    table.state(card)
    description = card.text(
        f"CRM contacts export ({len(dirty)} rows, {difficulty}).",
        "contact_id is the protected key and the row id. You may send a whole program of "
        "operations in one step.",
    )
    plan = (
        act("program", operations=table.plan()),
        act("drop_rows", row_ids=sorted(test_ids)),
    )
    return Generated(
        dirty, clean, "contact_id", description, 30, OPERATIONS, plan, difficulty=difficulty
    )
