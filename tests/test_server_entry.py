"""The `server` entry point (what `uv run server` and the Dockerfile run) really serves."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_server_script_starts_and_answers_health() -> None:
    port = free_port()
    script = Path(sys.executable).parent / "server"
    process = subprocess.Popen(
        [str(script), "--host", "127.0.0.1", "--port", str(port)],
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
        assert answer.json() == {"status": "healthy", "tasks_loaded": 4}
    finally:
        process.terminate()
        process.wait(timeout=15)
