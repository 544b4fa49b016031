"""The Dockerfile's command (the `server` entry point, also `uv run server`) really serves."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support import ALL_TASK_IDS

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def dockerfile_command(port: int) -> list[str]:
    """The Dockerfile's CMD, run from this venv, on loopback and a free port."""
    line = next(x for x in (ROOT / "Dockerfile").read_text().splitlines() if x.startswith("CMD "))
    command = json.loads(line.removeprefix("CMD "))
    command[0] = str(Path(sys.executable).parent / Path(command[0]).name)
    swap = {"0.0.0.0": "127.0.0.1", "7860": str(port)}
    return [swap.get(part, part) for part in command]


def test_the_docker_command_starts_the_server_and_answers_health() -> None:
    port = free_port()
    command = dockerfile_command(port)
    assert command[1:] == ["--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        command,
        cwd="/",  # the entry point must not depend on the working directory
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        answer = None
        while time.monotonic() < deadline and process.poll() is None:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        assert answer is not None, process.stderr.read().decode() if process.poll() else "no answer"
        assert answer.json() == {"status": "healthy", "tasks_loaded": len(ALL_TASK_IDS)}
    finally:
        process.terminate()
        process.wait(timeout=15)
