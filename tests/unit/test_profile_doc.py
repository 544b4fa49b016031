"""docs/PROFILE.md is the page `scripts/profile_engine.py --write` writes, and names only
modules that exist."""

from __future__ import annotations

import re
import sys

from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

import profile_engine

TEXT = profile_engine.PROFILE.read_text(encoding="utf-8")


def test_the_page_is_the_scripts_whole_output() -> None:
    assert TEXT.startswith(f"# Engine profiles\n\nProduced by `{profile_engine.COMMAND}` on ")
    sections = [line for line in TEXT.splitlines() if line.startswith("## ")]
    assert sections == [
        "## The four original tasks (20-60 rows)",
        "## Time per operation, the four original tasks (wall and CPU µs)",
        "## The hard task tiled to 20,000 rows",
    ]


def test_every_module_it_names_exists() -> None:
    named = set(re.findall(r"dataclean_env/[\w/]+\.py", TEXT))
    assert named  # the profile reads our modules by path
    assert sorted(p for p in named if not (ROOT / p).is_file()) == []


def test_it_times_every_operation_of_the_reference_plans() -> None:
    table = TEXT.split("## Time per operation", 1)[1].split("\n## ", 1)[0]
    timed = {line.split(" | ")[0].strip("| ") for line in table.splitlines()[4:] if line}
    planned = {a["operation"] for plan in profile_engine.PLANS.values() for a in plan}
    assert timed == planned
