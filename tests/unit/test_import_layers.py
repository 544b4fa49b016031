"""The package's floors hold: `lint-imports` keeps pyproject's layers contracts (the package's
folders, and the server's parts; every import counted, those inside functions too), and no
contract lists an exception."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _contracts() -> dict[str, dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["id"]: dict(c) for c in config["tool"]["importlinter"]["contracts"]}


def _layered(contract: dict[str, object]) -> set[str]:
    return {m.strip() for layer in contract["layers"] for m in str(layer).split("|")}  # type: ignore[attr-defined]


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
    assert "Contracts: 2 kept, 0 broken." in done.stdout


def _modules(package: Path, dotted: str) -> set[str]:
    """The folders and modules directly inside `package` (`__init__` aside)."""
    return {
        f"{dotted}.{p.stem}"
        for p in package.iterdir()
        if (p / "__init__.py").exists() or (p.suffix == ".py" and p.stem != "__init__")
    }


def test_the_contracts_name_every_part_and_allow_no_exception() -> None:
    contracts = _contracts()
    assert sorted(contracts) == ["layers", "server"]
    for contract in contracts.values():
        assert contract["type"] == "layers"
        assert "ignore_imports" not in contract
        assert "unmatched_ignore_imports_alerting" not in contract
    folders = {
        f"dataclean_env.{p.name}"
        for p in (ROOT / "dataclean_env").iterdir()
        if (p / "__init__.py").exists()
    } | {"dataclean_env.rate_limit"}  # the one module below both the leaderboard and the server
    assert folders <= _layered(contracts["layers"]), folders - _layered(contracts["layers"])
    server = _modules(ROOT / "dataclean_env" / "server", "dataclean_env.server")
    assert server == _layered(contracts["server"]), server ^ _layered(contracts["server"])
