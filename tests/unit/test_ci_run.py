"""What `.ci/run` does, by running it with recording stand-ins for the commands it calls."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
RECORDER = '#!/bin/sh\necho "$(basename "$0") $*" >> "$CI_LOG"\n'


def _commands(tmp_path: Path) -> list[str]:
    """The commands `.ci/run` runs, in order (bash, uv and pip record instead of running)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("bash", "uv", "pip"):
        (bin_dir / name).write_text(RECORDER)
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "log"
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "CI_LOG": str(log)}
    subprocess.run(["/bin/bash", str(ROOT / ".ci" / "run")], env=env, check=True, timeout=60)
    return log.read_text().splitlines()


def test_ci_runs_lint_and_types_first_then_the_readme_test_command(tmp_path: Path) -> None:
    commands = _commands(tmp_path)
    assert [c for c in commands if c.startswith("bash ")] == [
        "bash .ci/setup-browser.sh",
        "bash .ci/setup-postgres.sh",
        "bash .ci/setup-training.sh",
        "bash .ci/setup-raha.sh",
        "bash .ci/setup-corpus.sh",
        "bash .ci/setup-balancer.sh",
    ]
    checks = [c for c in commands if not c.startswith("bash ")]
    assert checks == [
        "uv run --locked ruff check .",
        "uv run --locked ruff format --check .",
        "uv run --locked mypy",
        "uv run --locked lint-imports --no-cache",
        "pip install uv",  # the README's test command, last
        "uv run --locked pytest",
    ]


def test_a_failing_tier_stops_the_run(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    failing_uv = RECORDER + '[ "$3" = mypy ] && exit 1\nexit 0\n'
    for name, script in (("bash", RECORDER), ("pip", RECORDER), ("uv", failing_uv)):
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "log"
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "CI_LOG": str(log)}
    run = subprocess.run(["/bin/bash", str(ROOT / ".ci" / "run")], env=env, timeout=60)
    assert run.returncode == 1
    assert log.read_text().splitlines()[-1] == "uv run --locked mypy"  # nothing after it
