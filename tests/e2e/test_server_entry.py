"""The Dockerfile's command (the `server` entry point, also `uv run server`) really serves:
on every address in the image, on loopback only by default (`uv run server`)."""

from __future__ import annotations

import json
import os
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


def serve_and_ask_health(command: list[str]) -> tuple[httpx.Response, set[str]]:
    """Start `command` (a server on a free port), wait for /health; its answer and the
    addresses its listening sockets are bound to, as /proc/net/tcp writes them."""
    port = int(command[command.index("--port") + 1])
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DCE_")}
    process = subprocess.Popen(
        command,
        cwd="/",  # the entry point must not depend on the working directory
        env={**environment, "DCE_WORKERS": "1"},
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
        return answer, listening_addresses(port)
    finally:
        process.terminate()
        process.wait(timeout=15)


def listening_addresses(port: int) -> set[str]:
    """The IPv4 addresses (hex, as the kernel writes them) with a socket listening on
    `port`: 0100007F is 127.0.0.1, 00000000 every address."""
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    found = set()
    for row in rows:
        local, state = row.split()[1], row.split()[3]
        address, _, hex_port = local.partition(":")
        if int(hex_port, 16) == port and state == "0A":  # TCP_LISTEN
            found.add(address)
    return found


def test_the_docker_command_starts_the_server_and_answers_health() -> None:
    port = free_port()
    command = dockerfile_command(port)
    assert command[1:] == ["--host", "127.0.0.1", "--port", str(port)]
    answer, _ = serve_and_ask_health(command)
    assert answer.json() == {"status": "healthy", "tasks_loaded": len(ALL_TASK_IDS)}


def test_the_image_listens_on_every_address() -> None:
    line = next(x for x in (ROOT / "Dockerfile").read_text().splitlines() if x.startswith("CMD "))
    assert json.loads(line.removeprefix("CMD "))[1:3] == ["--host", "0.0.0.0"]


def test_uv_run_server_listens_on_loopback_only() -> None:
    """`uv run server` with no --host and no DCE_HOST: reachable from this machine only."""
    port = free_port()
    server = str(Path(sys.executable).parent / "server")
    answer, addresses = serve_and_ask_health([server, "--port", str(port)])
    assert answer.status_code == 200
    assert addresses == {"0100007F"}
