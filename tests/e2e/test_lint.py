"""The code base stays ruff-clean (lint and format) and the Dockerfile hadolint-clean,
checked by the same test command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def ruff(*args: str) -> subprocess.CompletedProcess:
    executable = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    return subprocess.run([executable, *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("args", [("check", "."), ("format", "--check", ".")])
def test_ruff_is_clean(args: tuple[str, ...]) -> None:
    result = ruff(*args)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_is_hadolint_clean() -> None:
    executable = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    result = subprocess.run(
        [executable, "Dockerfile"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
