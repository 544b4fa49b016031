"""The built wheel alone serves every door: installed into a fresh virtual environment (with
the locked dependencies), away from the checkout, it runs an episode in-process, over REST,
over /ws, and through `inference.py --env-url`."""

from __future__ import annotations

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
pytestmark = pytest.mark.timeout(900)


def run(*command: str | Path, cwd: Path, timeout: float = 600) -> str:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=timeout
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


def test_the_wheel_holds_only_the_package(venv: Path) -> None:
    site = next((venv / "venv" / "lib").glob("python*/site-packages"))
    assert (site / "dataclean_env" / "datasets" / "task_metadata.json").exists()
    assert not (site / "server").exists()  # no top-level package called `server`
    assert not (site / "client.py").exists()


def test_an_episode_in_process_from_the_wheel(venv: Path) -> None:
    script = (
        "from dataclean_env.in_process import DataCleaningEnv\n"
        "env = DataCleaningEnv('easy_dedup_rename')\n"
        "env.reset()\n"
        "for action in env.registry.make('easy_dedup_rename').solution:\n"
        "    r = env.step(action)\n"
        "print(r.reward.total, r.observation.step, r.done)\n"
    )
    out = run(venv / "venv" / "bin" / "python", "-c", script, cwd=venv)
    assert out.split() == ["0.9999", "3", "True"]


def test_rest_ws_and_the_runner_from_the_wheel(venv: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [venv / "venv" / "bin" / "server", "--host", "127.0.0.1", "--port", str(port)],
        cwd=venv,
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
