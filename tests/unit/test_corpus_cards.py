"""docs/corpus.md is what scripts/corpus_cards.py writes from the corpus tables' cards."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import corpus_cards  # noqa: E402


def test_the_corpus_cards_are_current() -> None:
    committed = (ROOT / "docs" / "corpus.md").read_text(encoding="utf-8")
    assert corpus_cards.render() == committed, "run: uv run python scripts/corpus_cards.py"


def test_every_table_card_has_gymnasiums_sections_and_its_licence() -> None:
    text = corpus_cards.render()
    cards = text.split("\n## `")[1:]
    assert len(cards) == 6
    for card in cards:
        sections = [line for line in card.splitlines() if line.startswith("### ")]
        assert sections == [
            "### Description",
            "### Source and licence",
            "### Errors",
            "### Starting State",
            "### Rewards",
            "### Episode End",
        ]
        assert "- Licence: " in card and "- Origin: " in card
