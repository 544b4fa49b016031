"""docs/operating.md lists every setting with the default `Settings` gives it today."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import settings_doc  # noqa: E402


def test_the_settings_list_is_current() -> None:
    committed = (ROOT / "docs" / "operating.md").read_text(encoding="utf-8")
    assert settings_doc.with_settings(committed) == committed, "run scripts/settings_doc.py"


def test_the_list_names_each_variable_with_its_default() -> None:
    listed = settings_doc.render()
    assert "| `DCE_MAX_SESSIONS` | `256` |" in listed
    assert "| `EXTRA_DATASETS` | unset |" in listed
    assert "| `DATABASE_URL` | unset |" in listed
    assert listed.count("\n| `") == len(settings_doc.Settings.model_fields)
