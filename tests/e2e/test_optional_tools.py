"""On a machine without the optional tools (no HAProxy, PostgreSQL, Chromium, axe-core or
side venvs), every test that needs one skips and names the `.ci/` script that installs it;
under CI it fails instead, since `.ci/run` must have installed them all."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.scale_sessions import free_port

ROOT = Path(__file__).resolve().parents[2]


WHYS = (
    "import json; from tests.tools import TOOLS; print(json.dumps([t.why for t in TOOLS.values()]))"
)

AXE_WHY = "import json; from tests.tools import TOOLS; print(json.dumps(TOOLS['axe-core'].why))"


def probe_json(source: str, env: dict[str, str]) -> Any:
    run = subprocess.run(
        [sys.executable, "-c", source],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(run.stdout)


def bare_machine(tmp_path: Path, *, ci: bool) -> dict[str, str]:
    """This environment with nothing on PATH, no side venvs and no PostgreSQL server."""
    (tmp_path / "bin").mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env |= {
        "PATH": str(tmp_path / "bin"),
        "DCE_TRAINING_VENVS": str(tmp_path / "venvs"),
        "DCE_TEST_DATABASE_URL": f"postgresql://nobody:none@127.0.0.1:{free_port()}/none",
    }
    if ci:
        env["CI"] = "true"
    return env


def run_gated(env: dict[str, str], *where: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-m", "needs", "-rs", "-p", "no:randomly"]
    command += ["-p", "no:cacheprovider", *where]
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=540, check=False
    )


def test_every_test_of_an_optional_tool_skips_and_names_its_setup_script(tmp_path) -> None:
    env = bare_machine(tmp_path, ci=False)
    run = run_gated(env, "tests")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    summary = run.stdout.strip().splitlines()
    counts = next(line for line in reversed(summary) if " skipped" in line)
    assert re.fullmatch(r"\d+ skipped, \d+ deselected in [\d.]+s( \(.*\))?", counts), counts
    reasons = {
        match.group(1)
        for match in re.finditer(r"^SKIPPED \[\d+\] [^:]+:\d+: (.*)$", run.stdout, re.M)
    }
    # every tool's reason, as the bare machine's settings spell it (its URL and venv folder);
    # axe-core's only test needs Chromium first, so Chromium's reason is the one it gives
    assert reasons == set(probe_json(WHYS, env)) - {probe_json(AXE_WHY, env)}
    assert all(".ci/setup-" in reason for reason in reasons)


def test_under_ci_a_missing_tool_fails_the_test(tmp_path) -> None:
    run = run_gated(bare_machine(tmp_path, ci=True), "tests/e2e/test_workers.py")
    assert run.returncode == 1, run.stdout[-3000:]
    assert "CI must provide this: HAProxy is not on PATH (.ci/setup-balancer.sh)" in run.stdout
    assert re.search(r"^1 error in ", run.stdout, re.M), run.stdout[-2000:]
