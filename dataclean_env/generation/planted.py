"""Staff records with a few percent of planted errors, each marked by key, column and type.

The table of the detection and audit kinds. A clean staff table is drawn; then cells are
made wrong in one of the seven ways of `ERROR_TYPES` (missing, wrong type, out of range, bad
format, not in domain, inconsistent with another column) and some records are copied under
a new, later staff_id (duplicate rows). Both tables go through CSV text and are read back as
a custom dataset is read, so types are what a reader of the files would infer.
"""

from __future__ import annotations

import datetime as dt
import io
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dataclean_env.generation.claims_noise import full_name, noisy_phone, phone_digits, us_phone
from dataclean_env.grading.truth import ROW, Unit

KEY = "staff_id"
DEPARTMENTS = ("Sales", "Finance", "Engineering", "Support", "Marketing", "Legal")
CITY_COUNTRY = {
    "New York": "United States",
    "Chicago": "United States",
    "Toronto": "Canada",
    "Paris": "France",
    "Lyon": "France",
    "Munich": "Germany",
    "Berlin": "Germany",
    "Lagos": "Nigeria",
    "Tokyo": "Japan",
    "Osaka": "Japan",
}
AGE_RANGE = (18, 70)
SALARY_RANGE = (20_000, 250_000)
YEARS = (2000, 2025)
# Difficulty -> (fewest rows, most rows, share of cells made wrong).
SIZES = {"easy": (20, 40, 0.03), "medium": (40, 80, 0.05), "hard": (80, 150, 0.08)}
WORDS = {
    2: "twenty",
    3: "thirty",
    4: "forty",
    5: "fifty",
    6: "sixty",
}


@dataclass(frozen=True)
class Planted:
    dirty: pd.DataFrame
    gold: pd.DataFrame
    key: str
    errors: dict[Unit, str]  # (row id text, column or "*") -> type
    difficulty: str
    card: str  # the rules the table should follow (the task adds what to do)


def _typo(rng: random.Random, text: str) -> str:
    """Two neighbouring letters swapped (or a letter dropped): a value outside the domain."""
    if len(text) > 3 and rng.random() < 0.6:
        i = rng.randrange(1, len(text) - 2)
        swapped = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
        if swapped != text:
            return swapped
    i = rng.randrange(1, len(text) - 1)
    return text[:i] + text[i + 1 :]


def _missing(rng: random.Random, value: Any, row: dict[str, Any]) -> str:
    return rng.choice(["", "", "N/A", "null", "-"])


def _wrong_type(column: str) -> Callable[[random.Random, Any, dict[str, Any]], str]:
    def make(rng: random.Random, value: Any, row: dict[str, Any]) -> str:
        if column == "age":
            tens, ones = divmod(int(value), 10)
            return WORDS.get(tens, "forty") + ("" if not ones else f"-{ones}") + " years"
        if column == "salary":
            return rng.choice([f"{int(value) // 1000}k", f"{int(value) // 1000}K EUR", "TBD"])
        return rng.choice(["TBD", "unknown", "last spring"])  # hire_date

    return make


def _out_of_range(column: str) -> Callable[[random.Random, Any, dict[str, Any]], str]:
    def make(rng: random.Random, value: Any, row: dict[str, Any]) -> str:
        if column == "age":
            return str(rng.choice([0, 3, 150, 212, -4, 999]))
        if column == "salary":
            return str(rng.choice([-int(value), int(value) * 100, 7]))
        day = dt.date.fromisoformat(value)
        year = rng.choice([1899, 2099, 2190])  # none of them leap years: 29 February is 28th
        return day.replace(
            year=year, day=min(day.day, 28) if day.month == 2 else day.day
        ).isoformat()

    return make


def _bad_format(column: str) -> Callable[[random.Random, Any, dict[str, Any]], str]:
    def make(rng: random.Random, value: Any, row: dict[str, Any]) -> str:
        if column in ("name", "dept", "city"):
            variants = [v for v in (value.lower(), value.upper()) if v != value]
            return rng.choice(variants) if variants else f"  {value}"
        if column == "email":
            return str(value).upper()
        if column == "phone":
            digits = "".join(ch for ch in value if ch.isdigit())
            text = noisy_phone(rng, digits)
            return text if text != value else f"{digits[:3]}.{digits[3:6]}.{digits[6:]}"
        day = dt.date.fromisoformat(value)  # hire_date, written slashed
        return rng.choice([f"{day.month:02d}/{day.day:02d}/{day.year}", day.strftime("%d %b %Y")])

    return make


def _not_in_domain(column: str) -> Callable[[random.Random, Any, dict[str, Any]], str]:
    def make(rng: random.Random, value: Any, row: dict[str, Any]) -> str:
        if rng.random() < 0.3:
            return {"dept": "Dept 7", "city": "Atlantis", "country": "Wakanda"}[column]
        return _typo(rng, value)

    return make


def _inconsistent(rng: random.Random, value: Any, row: dict[str, Any]) -> str:
    """A real country, but not the one the row's city lies in."""
    return rng.choice(sorted({c for c in CITY_COUNTRY.values() if c != value}))


# Column -> the types of error that can be planted there.
PLANTERS: dict[str, dict[str, Callable[[random.Random, Any, dict[str, Any]], str]]] = {
    "name": {"missing": _missing, "bad_format": _bad_format("name")},
    "email": {"missing": _missing, "bad_format": _bad_format("email")},
    "dept": {
        "missing": _missing,
        "bad_format": _bad_format("dept"),
        "not_in_domain": _not_in_domain("dept"),
    },
    "city": {"bad_format": _bad_format("city"), "not_in_domain": _not_in_domain("city")},
    "country": {"not_in_domain": _not_in_domain("country"), "inconsistent": _inconsistent},
    "age": {
        "missing": _missing,
        "wrong_type": _wrong_type("age"),
        "out_of_range": _out_of_range("age"),
    },
    "salary": {
        "missing": _missing,
        "wrong_type": _wrong_type("salary"),
        "out_of_range": _out_of_range("salary"),
    },
    "hire_date": {
        "wrong_type": _wrong_type("hire_date"),
        "out_of_range": _out_of_range("hire_date"),
        "bad_format": _bad_format("hire_date"),
    },
    "phone": {"missing": _missing, "bad_format": _bad_format("phone")},
}


def _clean_rows(rng: random.Random, rows: int) -> list[dict[str, Any]]:
    ids = sorted(rng.sample(range(1000, 9000), rows))
    table = []
    for staff_id in ids:
        city = rng.choice(sorted(CITY_COUNTRY))
        hired = dt.date(2005, 1, 1) + dt.timedelta(days=rng.randrange(7000))
        table.append(
            {
                KEY: staff_id,
                "name": full_name(rng),
                "email": f"s{staff_id}@corp.example",
                "dept": rng.choice(DEPARTMENTS),
                "city": city,
                "country": CITY_COUNTRY[city],
                "age": rng.randint(22, 64),
                "salary": rng.randrange(30_000, 180_000, 500),
                "hire_date": hired.isoformat(),
                "phone": us_phone(phone_digits(rng)),
            }
        )
    return table


def _as_read(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    """The table as a reader of its CSV file would get it (only empty cells missing)."""
    text = pd.DataFrame(rows, columns=columns).to_csv(index=False)
    return pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])


def _copies(rows: int, rate: float) -> int:
    """How many duplicate rows an instance of `rows` clean rows gets, when it gets any."""
    return max(1, round(rows * rate / 3))


def dirty_row_bounds() -> tuple[int, int]:
    """The fewest and most rows a dirty table can have (duplicates included)."""
    low = min(low for low, _, _ in SIZES.values())
    return low, max(high + _copies(high, rate) for _, high, rate in SIZES.values())


def generate(rng: random.Random, difficulty: str | None = None) -> Planted:
    difficulty = difficulty or rng.choice(list(SIZES))
    low, high, rate = SIZES[difficulty]
    clean = _clean_rows(rng, rng.randint(low, high))
    columns = list(clean[0])
    dirty = [dict(row) for row in clean]
    # Which kinds of error this instance holds: three to six of the seven, so the audit's
    # categories have to be read from the table.
    kinds = set(
        rng.sample(
            sorted({k for p in PLANTERS.values() for k in p} | {"duplicate_row"}), rng.randint(3, 6)
        )
    )
    planters = {c: {k: f for k, f in p.items() if k in kinds} for c, p in PLANTERS.items()}
    planters = {c: p for c, p in planters.items() if p}
    cells = [(i, c) for i in range(len(dirty)) for c in planters]
    errors: dict[Unit, str] = {}
    for i, column in rng.sample(cells, max(2, round(len(cells) * rate))):
        kind = rng.choice(sorted(planters[column]))
        value = planters[column][kind](rng, clean[i][column], clean[i])
        if value.strip() == str(clean[i][column]):
            continue  # reads back as the clean value: not an error
        dirty[i][column] = value
        errors[(str(clean[i][KEY]), column)] = kind
    copies = _copies(len(clean), rate) if "duplicate_row" in kinds else 0
    next_id = clean[-1][KEY] + 1
    for original in rng.sample(clean, copies):
        copy = {**original, KEY: next_id}
        dirty.insert(rng.randrange(len(dirty) + 1), copy)
        errors[(str(next_id), ROW)] = "duplicate_row"
        next_id += rng.randint(1, 9)
    return Planted(
        _as_read(dirty, columns),
        _as_read(clean, columns),
        KEY,
        errors,
        difficulty,
        card(difficulty),
    )


def card(difficulty: str) -> str:
    """The rules of the staff table; hard instances leave the domains to be read from the
    values' frequencies."""
    if difficulty == "hard":
        domains = (
            "dept and city take a few recurring values (read them from the frequencies); each "
            "city lies in one country, as most rows show"
        )
    else:
        pairs = ", ".join(f"{city} -> {country}" for city, country in CITY_COUNTRY.items())
        domains = (
            f"dept is one of {', '.join(DEPARTMENTS)}; city is one of "
            f"{', '.join(CITY_COUNTRY)}; country is the city's country ({pairs})"
        )
    return (
        f"Staff records; {KEY} is the protected key and the row id. Rules: name in Title "
        f"Case; email lower case (s<staff_id>@corp.example); {domains}; age a whole number "
        f"from {AGE_RANGE[0]} to {AGE_RANGE[1]}; salary a whole number from "
        f"{SALARY_RANGE[0]:,} to {SALARY_RANGE[1]:,}; hire_date ISO text YYYY-MM-DD from "
        f"{YEARS[0]} to {YEARS[1]}; phone written (XXX) XXX-XXXX; no value is missing. A "
        f"record copied under a later {KEY} is a duplicate row."
    )
