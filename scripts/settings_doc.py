"""Write the list of settings in docs/operating.md from `Settings`' fields.

    uv run python scripts/settings_doc.py     # rewrites the part between the markers

Each row is an environment variable and its default, read from the model, so the list cannot
drift from the code; a test compares the committed part with what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dataclean_env.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "operating.md"
START, END = "<!-- settings:start -->", "<!-- settings:end -->"


def variable(name: str) -> str:
    alias = Settings.model_fields[name].validation_alias
    return alias if isinstance(alias, str) else f"DCE_{name.upper()}"


def default(name: str) -> str:
    field = Settings.model_fields[name]
    if field.default_factory is not None:
        return "computed at start-up"
    if field.default in ("", None):
        return "unset"
    return f"`{field.default}`"


def render() -> str:
    rows = ["| variable | default |", "|---|---|"]
    rows += [f"| `{variable(name)}` | {default(name)} |" for name in Settings.model_fields]
    return "\n".join([START, *rows, END])


def with_settings(text: str) -> str:
    before, rest = text.split(START, 1)
    return before + render() + rest.split(END, 1)[1]


def main() -> int:
    DOC.write_text(with_settings(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
