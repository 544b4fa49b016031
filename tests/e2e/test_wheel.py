"""The built wheel alone serves every door: installed into a fresh virtual environment (with
the locked runtime dependencies, from the package registry or uv's cache), away from the
checkout, it runs an episode in-process, its server command over REST and /ws, its runner
command on two tasks, its admin command on an empty leaderboard, and `inference.py
--env-url`. Every command's state (the leaderboard database) goes to the test's folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dataclean_env.tasks import default_registry
from tests.e2e.test_server_entry import free_port

ROOT = Path(__file__).resolve().parents[2]
UV = shutil.which("uv")
# Building, installing and first imports in a fresh venv (no bytecode yet) take minutes on
# a busy 2-core machine.


def run(
    *command: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600
) -> str:
    done = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if UV is None:
        pytest.skip("uv is not on PATH")
    work = tmp_path_factory.mktemp("wheel")
    run(UV, "build", "--wheel", "--out-dir", work / "dist", cwd=ROOT)
    wheel = next((work / "dist").glob("*.whl"))
    requirements = work / "requirements.txt"
    requirements.write_text(
        run(UV, "export", "--locked", "--no-dev", "--no-emit-project", "--no-hashes", cwd=ROOT)
    )
    run(UV, "venv", "--python", sys.executable, work / "venv", cwd=work)
    python = work / "venv" / "bin" / "python"
    run(UV, "pip", "install", "--python", python, "-r", requirements, wheel, cwd=work)
    yield work


def state_env(venv: Path) -> dict[str, str]:
    """The commands' environment: no key (the runner stays offline) and the leaderboard's
    database in the test's folder, never the user's data folder."""
    keep = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "OPENAI_API_KEY")}
    return {**keep, "DCE_LEADERBOARD_DB": str(venv / "board.sqlite3")}


def test_the_wheel_holds_only_the_package(venv: Path) -> None:
    site = next((venv / "venv" / "lib").glob("python*/site-packages"))
    assert (site / "dataclean_env" / "datasets" / "task_metadata.json").exists()
    assert not (site / "server").exists()  # no top-level package called `server`
    assert not (site / "client.py").exists()


def test_an_episode_in_process_from_the_wheel(venv: Path) -> None:
    # The README's in-process API, from the package alone.
    script = (
        "from dataclean_env import Action, DataCleaningEnv\n"
        "env = DataCleaningEnv('easy_dedup_rename')\n"
        "env.reset()\n"
        "for action in env.registry.make('easy_dedup_rename').reference_plan:\n"
        "    r = env.step(Action(**action))\n"
        "print(r.reward.total, r.observation.step, r.done)\n"
    )
    out = run(venv / "venv" / "bin" / "python", "-c", script, cwd=venv)
    assert out.split() == ["0.9999", "3", "True"]


def test_rest_ws_and_the_runner_from_the_wheel(venv: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            venv / "venv" / "bin" / "dataclean-env-server",
            *("--host", "127.0.0.1", "--port", str(port)),
        ],
        cwd=venv,
        env=state_env(venv),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                health = httpx.get(f"{url}/health", timeout=2).json()
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and server.poll() is None, "no server"
                time.sleep(0.3)
        assert health == {"status": "healthy", "tasks_loaded": len(default_registry().task_ids())}

        reset = httpx.post(f"{url}/reset/easy_dedup_rename", json={"episode_id": "w1"}).json()
        assert reset["observation"]["episode_id"] == "w1"
        step = httpx.post(
            f"{url}/step/easy_dedup_rename",
            json={"episode_id": "w1", "operation": "remove_duplicates"},
        ).json()
        assert step["observation"]["step"] == 1

        ws = (
            "from dataclean_env.client import DataCleaningClient, CleaningAction\n"
            f"with DataCleaningClient(base_url='{url}').sync() as env:\n"
            "    env.reset(task_id='easy_dedup_rename')\n"
            "    r = env.step(CleaningAction(operation='remove_duplicates'))\n"
            "    print(r.observation.step, r.reward > 0)\n"
        )
        assert run(venv / "venv" / "bin" / "python", "-c", ws, cwd=venv).split() == ["1", "True"]

        # inference.py as a user copies it, away from the checkout: only the wheel is there.
        shutil.copy(ROOT / "inference.py", venv / "inference.py")
        logs = run(
            venv / "venv" / "bin" / "python",
            "inference.py",
            "--env-url",
            url,
            "--tasks",
            "easy_dedup_rename",
            "--agent",
            "heuristic",
            cwd=venv,
        )
        lines = logs.splitlines()
        assert lines[0].startswith("[START] task=easy_dedup_rename ")
        assert lines[-1].startswith("[END] success=true ")
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_runner_command_plays_two_tasks_offline(venv: Path) -> None:
    done = subprocess.run(
        [venv / "venv" / "bin" / "dataclean-env-run", "--tasks", "easy_dedup_rename", "fix_types"],
        cwd=venv,
        env=state_env(venv),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    starts = [line for line in lines if line.startswith("[START]")]
    assert starts == [
        "[START] task=easy_dedup_rename env=data-cleaning-openenv model=heuristic-baseline",
        "[START] task=fix_types env=data-cleaning-openenv model=heuristic-baseline",
    ]
    assert sum(line.startswith("[END]") for line in lines) == 2
    assert "heuristic agent runs, offline" in done.stderr
    assert "family=generated episodes=1 " in done.stderr


def test_the_admin_command_audits_an_empty_leaderboard(venv: Path) -> None:
    admin = venv / "venv" / "bin" / "dataclean-env-admin"
    assert "audit" in run(admin, "--help", cwd=venv)
    out = run(admin, "audit", cwd=venv, env=state_env(venv))
    assert out.strip().endswith("0 records match, 0 differ; 0 of other grader versions")
