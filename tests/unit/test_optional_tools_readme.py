"""The README's table of optional tools names the scripts that the skipped tests name."""

from __future__ import annotations

import re

import pytest

from tests.tools import ROOT, TOOLS

pytestmark = pytest.mark.unit


def test_the_readme_names_every_setup_script_the_skips_name_and_each_exists() -> None:
    readme = (ROOT / "README.md").read_text()
    listed = set(re.findall(r"^\|[^|]+\|[^|]+\| `bash (\.ci/setup-[\w-]+\.sh)` \|$", readme, re.M))
    named = {re.search(r"\.ci/setup-[\w-]+\.sh", tool.why).group(0) for tool in TOOLS.values()}
    assert listed == named
    assert all((ROOT / script).is_file() for script in listed)
