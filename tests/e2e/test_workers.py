"""`server --workers 2`: 64 concurrent sessions through HAProxy, each seeing only
its own episode, with the load spread over both worker processes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import httpx
import pytest

from tests.e2e.scale_sessions import (
    PLANS,
    REST_SESSIONS,
    ROOT,
    TASKS,
    WS_SESSIONS,
    default_episode_round_trip,
    free_port,
    run_sessions,
    stop,
    wait_healthy,
)


def chunked_body_reaches_its_worker(url: str) -> None:
    def chunks():
        yield b'{"episode_id": "chunky", '
        yield b'"task_id": "easy_dedup_rename"}'

    first = httpx.post(f"{url}/reset", content=chunks(), timeout=60)
    assert first.status_code == 200 and first.json()["observation"]["episode_id"] == "chunky"
    step = httpx.post(
        f"{url}/step", json={"operation": "finish"}, headers={"X-Episode-Id": "chunky"}, timeout=60
    )
    assert step.status_code == 200 and step.json()["observation"]["step"] == 1


def raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        return sock.recv(4096)


def expect_continue_is_answered_by_the_balancer(port: int) -> None:
    """curl's `Expect: 100-continue`: HAProxy says continue, then relays the one answer."""
    body = json.dumps({"episode_id": "expecting", "task_id": "easy_dedup_rename"}).encode()
    head = (
        b"POST /reset HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"expect: 100-continue\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head)
        assert sock.recv(64) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


@pytest.mark.needs("haproxy")
def test_two_workers_serve_64_sessions_without_cross_talk_and_share_the_load(tmp_path) -> None:
    port = free_port()
    log = tmp_path / "server.log"
    env = {**os.environ, "DCE_LOG_JSON": "true"}
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dataclean_env.server.app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                "2",
            ],
            cwd=ROOT,
            env=env,
            stderr=stderr,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        steps = run_sessions(url)
        default_episode_round_trip(url)
        chunked_body_reaches_its_worker(url)
        assert raw(port, b"NONSENSE\r\nno-colon-here\r\n\r\n").startswith(b"HTTP/1.1 400")
        huge = b"POST /step HTTP/1.1\r\nhost: x\r\ncontent-length: 99999999999\r\n\r\n"
        assert raw(port, huge).startswith(b"HTTP/1.1 413")
        expect_continue_is_answered_by_the_balancer(port)
        metrics = httpx.get(f"{url}/metrics", timeout=30).text
    finally:
        stop(process)
    assert steps == sum(len(PLANS[TASKS[i % len(TASKS)]]) for i in range(REST_SESSIONS)) + sum(
        len(PLANS[TASKS[i % len(TASKS)]]) for i in range(WS_SESSIONS)
    )
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    step_lines = [line for line in lines if line["route"] in ("/step/{task_id}", "/step", "/ws")]
    workers = {line["worker"] for line in step_lines}
    assert len(workers) == 2, f"steps reached {len(workers)} worker(s)"
    assert all(line["status"] in (200, "ok") for line in step_lines), [
        line for line in step_lines if line["status"] not in (200, "ok")
    ][:3]
    # /metrics on any worker sums both processes' samples (prometheus multiprocess mode)
    rest_steps = sum(1 for line in step_lines if line["route"] != "/ws")
    assert f'dce_step_seconds_count{{door="rest"}} {float(rest_steps)}' in metrics
