"""A generated dirty/clean table pair for the real-table agents (no benchmark's data).

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
