"""`server --workers N` at its edges: the processes are served like a single process (the
same uvicorn options, the leaderboard database opened at start-up), and HAProxy in front
guards the connections (slow headers, slow bodies, idle keep-alive) and tells the processes
who the client is (X-Forwarded-For, trusted only from the configured proxies)."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dataclean_env.server.processes import workers
from tests.e2e.scale_sessions import ROOT, free_port, stop, wait_healthy

pytestmark = pytest.mark.needs("haproxy")

FAST_TIMEOUTS = {"DCE_HEADER_SECONDS": "1", "DCE_BODY_SECONDS": "1", "DCE_KEEP_ALIVE_SECONDS": "1"}


def read_until_closed(sock: socket.socket, seconds: float) -> tuple[bytes, float]:
    """Everything the peer sends until it closes (or `seconds` pass: socket.timeout)."""
    sock.settimeout(seconds)
    start = time.monotonic()
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return received, time.monotonic() - start


# ── the workers ─────────────────────────────────────────────────────────────
def test_a_worker_is_served_like_a_single_process(tmp_path, monkeypatch) -> None:
    """Slow headers close a worker's connection (DCE_HEADER_SECONDS), and the leaderboard
    database exists, migrated, before the worker first answers /health."""
    monkeypatch.setenv("DCE_HEADER_SECONDS", "1")
    database = tmp_path / "board.sqlite3"
    monkeypatch.setenv("DCE_LEADERBOARD_DB", str(database))
    folder = tmp_path / "workers"
    folder.mkdir()
    processes, sockets = workers.start_workers(1, folder)
    try:
        with sqlite3.connect(database) as connection:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        assert {"runs", "run_episodes", "records", "submissions"} <= tables
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(sockets[0])
            sock.sendall(b"GET /health HTTP/1.1\r\nhost: worker\r\n")  # never finished
            received, waited = read_until_closed(sock, 8)
        assert received == b"" and waited < 5
    finally:
        workers.stop_all(processes)


# ── HAProxy ───────────────────────────────────────────────────────────────
def start_front(tmp_path: Path, extra: dict[str, str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {
        **os.environ,
        **FAST_TIMEOUTS,
        "DCE_LEADERBOARD_DB": str(tmp_path / "board.sqlite3"),
        **extra,
    }
    argv = [sys.executable, "-m", "dataclean_env.server.app", "--host", "127.0.0.1"]
    process = subprocess.Popen([*argv, "--port", str(port), "--workers", "2"], cwd=ROOT, env=env)
    wait_healthy(f"http://127.0.0.1:{port}", process)
    return process, port


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    folder = tmp_path_factory.mktemp("front")
    process, port = start_front(folder, {"DCE_FORWARDED_ALLOW_IPS": "127.0.0.1"})
    try:
        yield port, folder / "board.sqlite3"
    finally:
        stop(process)


def assert_408_within_seconds(port: int, *parts: bytes) -> None:
    """Send `parts` 0.4 s apart and never finish the request: HAProxy answers 408 and
    closes the connection within 5 s."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        for n, part in enumerate(parts):
            if n:
                time.sleep(0.4)
            sock.sendall(part)
        received, waited = read_until_closed(sock, 8)
    assert received.startswith(b"HTTP/1.1 408 Request Time-out\r\n"), received  # HAProxy's
    assert waited < 5


def test_haproxy_answers_408_to_headers_that_never_end(front) -> None:
    port, _ = front
    # a slowloris client trickles on, never finishing its headers
    assert_408_within_seconds(port, b"POST /step HTTP/1.1\r\nhost: x\r\n", b"x-slow: 1\r\n")


def test_haproxy_answers_408_to_a_body_that_never_ends(front) -> None:
    port, _ = front
    assert_408_within_seconds(
        port,
        b"POST /step HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b'content-length: 40\r\n\r\n{"operation"',
    )


def test_haproxy_closes_an_idle_kept_alive_connection(front) -> None:
    port, _ = front
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nhost: x\r\n\r\n")
        received, waited = read_until_closed(sock, 8)  # the answer, then the close
    assert received.startswith(b"HTTP/1.1 200") and b'"healthy"' in received
    assert 0.5 < waited < 5


def submitted_client(port: int, database: Path, model: str, headers: dict[str, str]) -> str:
    """The client address the leaderboard stores for a submission made through the front."""
    answer = httpx.post(
        f"http://127.0.0.1:{port}/leaderboard/submit",
        json={"model_name": model, "task_id": "easy_dedup_rename", "score": 0.5},
        headers=headers,
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    with sqlite3.connect(database) as connection:
        (client,) = connection.execute(
            "SELECT client FROM submissions WHERE model_name = ?", (model,)
        ).fetchone()
    return client


def test_processes_see_the_client_address_not_the_balancer(front) -> None:
    port, database = front
    assert submitted_client(port, database, "direct", {}) == "127.0.0.1"
    # The client is 127.0.0.1, named a trusted proxy (DCE_FORWARDED_ALLOW_IPS): what it
    # forwards is believed, as a single process believes it.
    forwarded = {"X-Forwarded-For": "203.0.113.9"}
    assert submitted_client(port, database, "proxied", forwarded) == "203.0.113.9"


def test_a_client_that_is_no_trusted_proxy_cannot_claim_another_address(tmp_path) -> None:
    process, port = start_front(tmp_path, {})  # by default no proxy is trusted
    try:
        database = tmp_path / "board.sqlite3"
        forged = {"X-Forwarded-For": "203.0.113.9"}
        assert submitted_client(port, database, "forged", forged) == "127.0.0.1"
    finally:
        stop(process)
