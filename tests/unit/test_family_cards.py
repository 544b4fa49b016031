"""docs/families.md is what scripts/family_cards.py writes from the task registry today."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import family_cards  # noqa: E402


def test_the_family_cards_are_current() -> None:
    committed = (ROOT / "docs" / "families.md").read_text(encoding="utf-8")
    assert family_cards.render() == committed, "run: uv run python scripts/family_cards.py"


def test_every_family_has_a_card_with_gymnasiums_sections() -> None:
    text = family_cards.render()
    for family in ("fixed", "generated", "claims", "custom"):
        card = text.split(f"## `{family}`\n", 1)[1].split("\n## `", 1)[0]
        sections = [line for line in card.splitlines() if line.startswith("### ")]
        assert sections == [
            "### Description",
            "### Action Space",
            "### Observation Space",
            "### Rewards",
            "### Starting State",
            "### Episode End",
            "### Arguments",
            "### Version History",
        ]
    assert "| `crm` | `crm-v2` |" in text
    assert "| `hard_full_pipeline` | 20 |" in text
    # the seeded claims families' budgets grow with the table, so the card gives a range
    assert "| `error_detection` | 8 to 14, by instance |" in text
    assert "| `standardisation` | 9 to 11, by instance |" in text
    assert "| `audit_pipeline` | 12 to 18, by instance |" in text
    assert "| `detection_showcase` | 10 |" in text
