"""mypy checks the package with the stubs it needs (`.ci/run` runs it: test_ci_run.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_checks_the_package_with_pandas_stubs() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["tool"]["mypy"]["files"] == ["dataclean_env"]
    dev = " ".join(pyproject["dependency-groups"]["dev"])
    assert "mypy" in dev and "pandas-stubs" in dev and "types-regex" in dev
    ignored = [o["module"] for o in pyproject["tool"]["mypy"]["overrides"]]
    assert ignored == [["openenv.*", "trl.*"]]  # only packages without types in this venv
