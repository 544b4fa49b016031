"""The reference agents carry no values of any shipped real table: no string literal of the
agents' code (at least 4 characters: shorter ones are digits, signs and SQL words any code
has) equals a cell of rayyan or of a corpus table (clean, dirty, or an error layer's value),
so whatever they repair they learn from the table and its labels, not from knowing it."""

from __future__ import annotations

import ast
import csv
from pathlib import Path

from tests.support import ROOT

AGENTS = ROOT / "dataclean_env" / "agents"
SHORTEST = 4


def cells(path: Path, column: str | None = None) -> set[str]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle)
        return {
            (value or "").strip()
            for row in rows
            for name, value in row.items()
            if column is None or name == column
        }


def table_values() -> set[str]:
    values: set[str] = set()
    for path in (ROOT / "datasets" / "rayyan").glob("*.csv"):
        values |= cells(path)
    for folder in (ROOT / "dataclean_env" / "corpus" / "tables").iterdir():
        values |= cells(folder / "clean.csv") | cells(folder / "layers.csv", "value")
    return {v for v in values if len(v) >= SHORTEST}


def literals(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.value.strip()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def test_the_shipped_tables_are_read() -> None:
    values = table_values()
    assert len(values) > 10_000  # the tables were found and read
    assert "Seattle Tacoma Intl" in values  # a corpus cell (airports)


def test_no_agent_literal_is_a_value_of_a_shipped_table() -> None:
    values = table_values()
    found = {
        (path.name, literal)
        for path in sorted(AGENTS.glob("*.py"))
        for literal in literals(path)
        if literal in values
    }
    assert found == set()
