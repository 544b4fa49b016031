"""The corpus tables as committed: clean.csv, layers.csv and card.json per table folder.

Each file is checked against the sha256 its card pins when the table is first read, so a
table that changed without a rebuild is refused rather than served.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

TABLES_DIR = Path(__file__).resolve().with_name("tables")


@dataclass(frozen=True)
class CorpusTable:
    name: str
    card: dict[str, Any]
    clean: pd.DataFrame  # text, empty cells missing (as tasks/custom.py reads a CSV)
    # layer -> its cells: (row position in `clean`, copy, column, dirty text; "" is an empty
    # cell). Copy 0 is the clean row's own cell; copy k >= 1 a cell of the k-th row the
    # layer adds after it (a duplicate or another report of the entity), listed whole.
    layers: dict[int, tuple[tuple[int, int, str, str], ...]]


def table_names() -> list[str]:
    return sorted(p.name for p in TABLES_DIR.iterdir() if (p / "card.json").is_file())


def _pinned(path: Path, digest: str) -> bytes:
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != digest:
        raise ValueError(f"{path} does not match the sha256 its card pins; rebuild the corpus")
    return data


@cache
def load_card(name: str) -> dict[str, Any]:
    card: dict[str, Any] = json.loads((TABLES_DIR / name / "card.json").read_text("utf-8"))
    return card


@cache
def load_table(name: str) -> CorpusTable:
    folder = TABLES_DIR / name
    card = load_card(name)
    clean = pd.read_csv(
        io.BytesIO(_pinned(folder / "clean.csv", card["clean_sha256"])),
        dtype=str,
        keep_default_na=False,
        na_values=[""],
    )
    cells = pd.read_csv(
        io.BytesIO(_pinned(folder / "layers.csv", card["layers_sha256"])),
        dtype={"layer": int, "row": int, "copy": int, "column": str, "value": str},
        keep_default_na=False,
    )
    layers: dict[int, list[tuple[int, int, str, str]]] = {
        layer["layer"]: [] for layer in card["layers"]
    }
    for layer, row, copy, column, value in cells.itertuples(index=False):
        layers[int(layer)].append((int(row) - 1, int(copy), str(column), str(value)))
    return CorpusTable(name, card, clean, {k: tuple(v) for k, v in layers.items()})
