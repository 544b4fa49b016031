"""`scripts/benchmark.py --before` writes one client's step rate, the step memory off, of
another checkout beside this one's, each as a multiple of CleanifyAI's when it ran."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import benchmark  # noqa: E402

pytestmark = pytest.mark.unit


def test_the_table_puts_before_and_after_beside_cleanify() -> None:
    lines = benchmark.before_after_section(("6603a4f", 1200.0), ("abc1234", 1500.0), 100.0)
    assert lines[0] == "## Before and after (one client, the step memory off)"
    assert lines[4:] == [
        "| checkout | steps/s | vs CleanifyAI |",
        "|---|---|---|",
        "| before (6603a4f) | 1200 | 12.0x |",
        "| after (abc1234) | 1500 | 15.0x |",
        "| CleanifyAI | 100 | 1.0x |",
        "",
        "After / before: **1.25x**.",
    ]


def test_without_cleanify_the_table_has_no_ratio_column() -> None:
    lines = benchmark.before_after_section(("6603a4f", 1000.0), ("abc1234", 900.0), None)
    assert lines[4:] == [
        "| checkout | steps/s |",
        "|---|---|",
        "| before (6603a4f) | 1000 |",
        "| after (abc1234) | 900 |",
        "",
        "After / before: **0.90x**.",
    ]


def test_a_checkout_outside_git_is_named_by_its_folder(tmp_path: Path) -> None:
    assert benchmark.revision(tmp_path) == tmp_path.name
