"""Generated dirty/clean table pairs for the real-table tests (no benchmark's data).

`write_pair` makes the orders pair below; `write_conflict_pair` a pair of any size and share
of wrong cells, whose rows report facts about shared entities with conflicting values.

Rows of orders, drawn from a seeded generator: `id` (key), `customer` (a name), `city` and
`state` (`city -> state` holds in the clean table), `product` (a few products), `coupon`
(often empty). The dirty copy
carries four documented kinds of error, each on a fixed share of rows:

* functional-dependency violations: every 29th row's `state` is another state;
* typos: every 31st row's `product` loses one letter;
* null tokens: every 13th row with an empty `coupon` writes it `N/A`;
* mangled characters: every 37th row's `customer` has a letter replaced by U+FFFD.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

CITIES = {
    "Springfield": "IL",
    "Portland": "OR",
    "Austin": "TX",
    "Denver": "CO",
    "Boston": "MA",
    "Tucson": "AZ",
    "Raleigh": "NC",
    "Madison": "WI",
}
PRODUCTS = ("Notebook", "Pencil", "Stapler", "Backpack", "Calculator", "Marker")
FIRST = ("Ana", "Ben", "Carla", "Dmitri", "Elena", "Farid", "Greta", "Hiro")
LAST = ("Smith", "Olsen", "Garcia", "Nakamura", "Kowalski", "Okafor")
HEADER = "id,customer,city,state,product,coupon"


def clean_row(i: int, pick: random.Random) -> list[str]:
    city = pick.choice(list(CITIES))
    coupon = f"SAVE{pick.randrange(7)}" if pick.random() < 0.4 else ""
    customer = f"{pick.choice(FIRST)} {pick.choice(LAST)}"
    return [str(10_000 + i), customer, city, CITIES[city], pick.choice(PRODUCTS), coupon]


def dirty_row(i: int, row: list[str]) -> list[str]:
    row = list(row)
    if i % 29 == 7:
        states = sorted(set(CITIES.values()) - {row[3]})
        row[3] = states[i % len(states)]
    if i % 31 == 5:
        row[4] = row[4][:2] + row[4][3:]
    if i % 13 == 4 and row[5] == "":
        row[5] = "N/A"
    if i % 37 == 11:
        row[1] = row[1][:1] + "\ufffd" + row[1][2:]
    return row


def write_pair(folder: Path, rows: int = 2400, max_steps: int = 30) -> int:
    """Write `clean.csv`, `dirty.csv` and `task.json` into `folder`; the number of cells
    that differ."""
    folder.mkdir(parents=True, exist_ok=True)
    pick = random.Random(rows)  # the same pair for the same size
    clean = [clean_row(i, pick) for i in range(rows)]
    dirty = [dirty_row(i, row) for i, row in enumerate(clean)]
    for name, table in (("clean.csv", clean), ("dirty.csv", dirty)):
        lines = [HEADER] + [",".join(row) for row in table]
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "task.json").write_text(
        json.dumps({"key": "id", "max_steps": max_steps}), encoding="utf-8"
    )
    return sum(a != b for c, d in zip(clean, dirty, strict=True) for a, b in zip(c, d, strict=True))


# ── a pair with a chosen share of wrong cells, sources conflicting over one entity ─────
SOURCES = ("airline", "airport", "tracker", "agency", "press", "board")
REPORT_HEADER = ("id", "entity", "source", "city", "state", "departs", "gate", "price")
KEYBOARD = dict(zip("qwertyuiopasdfghjklzxcvbnm", "wqrtyuiopsadfghjklkzxcvbnm", strict=True))
NULL_TOKENS = ("", "N/A", "-1", "null")


def report_rows(rows: int, pick: random.Random) -> list[list[str]]:
    """Clean rows of flight reports: each entity (a flight) is reported by 1-6 sources, and
    every report of it carries the same facts (city, state, departure, gate, price)."""
    table: list[list[str]] = []
    flight = 0
    while len(table) < rows:
        flight += 1
        city = pick.choice(list(CITIES))
        facts = [
            city,
            CITIES[city],
            f"{pick.randrange(5, 23):02d}:{pick.randrange(0, 60, 5):02d}",
            f"{pick.choice('ABCDE')}{pick.randrange(1, 40)}",
            f"{pick.randrange(49, 900)}.{pick.randrange(100):02d}",
        ]
        for source in pick.sample(SOURCES, pick.randint(1, 6)):
            table.append([str(100_000 + len(table)), f"FL-{flight:05d}", source, *facts])
    return table[:rows]


def corrupted(value: str, donors: list[str], pick: random.Random) -> str:
    """`value` made wrong in one of the literature's ways: a conflicting value another
    source reports (a value of the same column elsewhere), a typo, a missing-value token,
    or a format variant. Never equal to `value` once trimmed."""
    kind = pick.choice(("conflict", "conflict", "typo", "missing", "format"))
    if kind == "conflict":
        wrong = pick.choice(donors)
    elif kind == "typo" and len(value) > 1:
        at = pick.randrange(len(value))
        char = value[at].lower()
        wrong = value[:at] + KEYBOARD.get(char, "x") + value[at + 1 :]
    elif kind == "missing":
        wrong = pick.choice(NULL_TOKENS)
    else:  # another case, or another separator
        wrong = value.swapcase()
        if wrong == value:
            wrong = value.replace(":", "h").replace(".", ",")
    return wrong if wrong.strip() != value.strip() else value + "x"


def write_conflict_pair(folder: Path, rows: int, wrong_share: float, seed: int = 0) -> int:
    """Write `clean.csv`, `dirty.csv` and `task.json` (key `id`, the budget left to the
    task) into `folder`: `rows` flight reports in which exactly `wrong_share` of the
    non-key cells are wrong (`corrupted`). Returns the number of wrong cells."""
    folder.mkdir(parents=True, exist_ok=True)
    pick = random.Random(seed * 1_000_003 + rows)
    clean = report_rows(rows, pick)
    width = len(REPORT_HEADER) - 1
    donors = [sorted({row[c] for row in clean}) for c in range(len(REPORT_HEADER))]
    dirty = [list(row) for row in clean]
    wrong = pick.sample(range(rows * width), round(wrong_share * rows * width))
    for cell in wrong:
        row, column = divmod(cell, width)
        column += 1  # past the key
        dirty[row][column] = corrupted(clean[row][column], donors[column], pick)
    for name, table in (("clean.csv", clean), ("dirty.csv", dirty)):
        with open(folder / name, "w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows([REPORT_HEADER, *table])
    (folder / "task.json").write_text(json.dumps({"key": "id"}), encoding="utf-8")
    return len(wrong)
