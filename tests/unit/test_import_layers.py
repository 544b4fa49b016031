"""The package's floors hold: `lint-imports` keeps pyproject's layers contract (every import
counted, those inside functions too), and the contract lists no exception."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _contract() -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = config["tool"]["importlinter"]["contracts"]
    return dict(contract)


def test_the_layers_contract_is_kept() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(lint_imports), "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 1 kept, 0 broken." in done.stdout


def test_the_contract_names_every_folder_and_allows_no_exception() -> None:
    contract = _contract()
    assert contract["type"] == "layers"
    assert "ignore_imports" not in contract and "unmatched_ignore_imports_alerting" not in contract
    layered = {m.strip() for layer in contract["layers"] for m in str(layer).split("|")}
    folders = {
        f"dataclean_env.{p.name}"
        for p in (ROOT / "dataclean_env").iterdir()
        if (p / "__init__.py").exists()
    }
    assert folders <= layered, folders - layered
