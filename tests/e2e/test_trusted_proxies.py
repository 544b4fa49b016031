"""The client is the address a trusted proxy saw, never what a client writes: forged
X-Forwarded-For chains move no limit (resets, /ws sessions, leaderboard runs, submissions),
over real HTTP, straight to uvicorn and through HAProxy (deploy/haproxy.cfg).

On loopback every address is 127.x, so the roles get their own: HAProxy connects to the
server from 127.0.0.2 (the only trusted proxy), the client from 127.0.0.1, and a second
client from 127.0.0.3.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from dataclean_env.settings import Settings
from tests.e2e.scale_sessions import free_port, stop, wait_healthy
from tests.e2e.test_scale_replicas import balancer_config
from tests.web import LiveServer

PROXY = "127.0.0.2"
CLIENT = "127.0.0.1"
OTHER_CLIENT = "127.0.0.3"
ALLOWED = 2  # of each limited thing, per client
# What a client writes to pass for someone else: a fresh address, a chain that ends in the
# trusted proxy, two headers, the proxy itself, an address with a port, IPv6, garbage.
FORGERIES: list[list[tuple[str, str]]] = [
    [("X-Forwarded-For", "6.6.6.1")],
    [("X-Forwarded-For", f"6.6.6.2, {PROXY}")],
    [("X-Forwarded-For", "6.6.6.3"), ("X-Forwarded-For", PROXY)],
    [("X-Forwarded-For", PROXY)],
    [("X-Forwarded-For", "6.6.6.4:4242")],
    [("X-Forwarded-For", "2001:db8::6")],
    [("X-Forwarded-For", ", ,unknown, 6.6.6.5")],
    [("X-Forwarded-For", "6.6.6.6"), ("X-Real-IP", "6.6.6.7"), ("Forwarded", "for=6.6.6.8")],
]
LIMITS = {
    "creation_burst": ALLOWED,
    "creation_rate_per_second": 0.0001,  # no refill within the test
    "leaderboard_runs_per_hour": ALLOWED,
    "leaderboard_submissions_per_hour": ALLOWED,
    "leaderboard_open_runs_per_client": 10 * ALLOWED,  # the hourly limit is the subject here
    "leaderboard_open_anonymous_runs": 1000,  # and so is not the anonymous pool
    "forwarded_allow_ips": PROXY,
}


def http_attempt(method: str, path: str, body: dict) -> Callable[[str, str, list], int]:
    def attempt(url: str, source: str, headers: list[tuple[str, str]]) -> int:
        transport = httpx.HTTPTransport(local_address=source)
        with httpx.Client(transport=transport, timeout=120) as client:
            return client.request(method, url + path, json=body, headers=headers).status_code

    return attempt


def ws_attempt(url: str, source: str, headers: list[tuple[str, str]]) -> int:
    """Open /ws from `source` and reset: 200 when an observation comes back, 429 when the
    server refused the session (OpenEnv's error frame with RATE_LIMITED)."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=60, source_address=(source, 0))
    with connect(f"ws://{host}:{port}/ws", sock=sock, additional_headers=headers) as ws:
        # refused: the socket may be closing, its error frame already on the way
        with contextlib.suppress(ConnectionClosed):
            ws.send(json.dumps({"type": "reset", "data": {"task_id": "easy_dedup_rename"}}))
        frame = json.loads(ws.recv(timeout=120))
    if frame["type"] == "observation":
        return 200
    assert frame["data"]["code"] == "RATE_LIMITED", frame
    return 429


ATTEMPTS = {
    "resets": http_attempt("POST", "/reset", {"task_id": "easy_dedup_rename"}),
    "ws sessions": ws_attempt,
    "leaderboard runs": http_attempt(
        "POST", "/leaderboard/runs", {"name": "t", "model": "m", "families": ["crm"], "episodes": 1}
    ),
    "submissions": http_attempt(
        "POST",
        "/leaderboard/submit",
        {"model_name": "m", "task_id": "crm", "score": 0.5, "steps": 3},
    ),
}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    settings = Settings(leaderboard_db=tmp_path / "lb.sqlite3", **LIMITS)
    with LiveServer(settings) as live:
        yield live


@pytest.fixture
def balancer(tmp_path: Path, server: LiveServer) -> Iterator[str]:
    """HAProxy with deploy/haproxy.cfg in front of `server`, connecting from PROXY."""
    port = free_port()
    text = balancer_config(port, [server.port])
    text = text.replace(f"127.0.0.1:{server.port}", f"127.0.0.1:{server.port} source {PROXY}")
    config = tmp_path / "haproxy.cfg"
    config.write_text(text)
    check = subprocess.run(["haproxy", "-c", "-f", str(config)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    process = subprocess.Popen(["haproxy", "-db", "-f", str(config)])
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, process, seconds=30)
        yield url
    finally:
        stop(process)


def spend_and_forge(url: str, attempt: Callable[[str, str, list], int]) -> None:
    """The client's allowance is spent under forged addresses, every further forgery is
    refused, and another client is still served."""
    spent = [attempt(url, CLIENT, FORGERIES[i]) for i in range(ALLOWED)]
    assert spent == [200] * ALLOWED
    refused = [attempt(url, CLIENT, forged) for forged in FORGERIES]
    assert refused == [429] * len(FORGERIES)
    assert attempt(url, OTHER_CLIENT, FORGERIES[0]) == 200


@pytest.mark.parametrize("limit", list(ATTEMPTS))
def test_forged_chains_straight_to_the_server_move_no_limit(server: LiveServer, limit) -> None:
    spend_and_forge(server.url, ATTEMPTS[limit])


@pytest.mark.parametrize("limit", list(ATTEMPTS))
def test_no_proxy_is_trusted_unless_one_is_named(tmp_path: Path, limit) -> None:
    # Not even one on the same machine: by default 127.0.0.1 forging X-Forwarded-For
    # would open anonymous runs past the pool and dodge every per-client quota.
    unnamed = {key: value for key, value in LIMITS.items() if key != "forwarded_allow_ips"}
    settings = Settings(leaderboard_db=tmp_path / "lb.sqlite3", **unnamed)
    assert settings.forwarded_allow_ips == ""
    with LiveServer(settings) as live:
        spend_and_forge(live.url, ATTEMPTS[limit])


@pytest.mark.parametrize("limit", list(ATTEMPTS))
@pytest.mark.needs("haproxy")
def test_forged_chains_through_haproxy_move_no_limit(balancer: str, limit) -> None:
    spend_and_forge(balancer, ATTEMPTS[limit])


@pytest.mark.parametrize("value", ["*", "proxy.internal", "10.0.0.1/8", "127.0.0.1,*"])
def test_trusted_proxies_are_named_by_address(value: str) -> None:
    with pytest.raises(ValueError, match="DCE_FORWARDED_ALLOW_IPS"):
        Settings(forwarded_allow_ips=value)
