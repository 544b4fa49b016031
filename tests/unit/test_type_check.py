"""CI type-checks the package before it runs the tests (issue 9)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
TEST_COMMAND = "pip install uv && uv run --locked pytest"


def test_ci_runs_mypy_right_before_the_test_command() -> None:
    lines = [
        line.split("#")[0].strip()
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    ]
    test_line = lines.index(TEST_COMMAND)
    assert lines[test_line - 1] == "uv run --locked mypy"


def test_mypy_checks_the_package_with_pandas_stubs() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["tool"]["mypy"]["files"] == ["dataclean_env"]
    dev = " ".join(pyproject["dependency-groups"]["dev"])
    assert "mypy" in dev and "pandas-stubs" in dev and "types-regex" in dev
    ignored = [o["module"] for o in pyproject["tool"]["mypy"]["overrides"]]
    assert ignored == [["openenv.*", "trl.*"]]  # only packages without types in this venv
