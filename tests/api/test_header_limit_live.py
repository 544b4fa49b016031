"""The 64 KiB limit on a request's head, on the wire: a real uvicorn on 127.0.0.1 and a raw
socket. A complete request sent in one write used to reach the app (200) when its head was
between the limit and a read's size (the size was checked after httptools dispatched it)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest

from dataclean_env.server.processes.serving import MAX_HEADER_BYTES
from tests.web import LiveServer


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


def reset_request(episode_id: str, extra_headers: bytes) -> bytes:
    body = json.dumps({"seed": 0, "episode_id": episode_id}).encode()
    return (
        b"POST /reset/crm HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + extra_headers
        + b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )


def send_once(port: int, request: bytes) -> bytes:
    """`request` in one write; everything the server answers until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)  # no more requests: the server closes after answering
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def episode_exists(server: LiveServer, episode_id: str) -> bool:
    state = httpx.get(f"{server.url}/state/crm", params={"episode_id": episode_id}, timeout=30)
    assert state.status_code in (200, 404), state.text
    return state.status_code == 200


def test_a_small_head_in_one_write_resets(server: LiveServer) -> None:
    # The control: the same request with a small head reaches the app.
    answer = send_once(server.port, reset_request("small", b"X-Small: a\r\n"))
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    assert episode_exists(server, "small")


@pytest.mark.parametrize(
    "extra_headers",
    [
        b"X-Big: " + b"a" * 70_000 + b"\r\n",
        b"X-Big: " + b"a" * 130_000 + b"\r\n",
        b"".join(b"X-%d: a\r\n" % i for i in range(20_000)),
    ],
    ids=["70000", "130000", "20000-headers"],
)
def test_a_head_past_the_limit_in_one_write_is_answered_431_before_the_app_runs(
    server: LiveServer, extra_headers: bytes
) -> None:
    request = reset_request("big", extra_headers)
    assert request.index(b"\r\n\r\n") > MAX_HEADER_BYTES
    answer = send_once(server.port, request)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert json.loads(body)["code"] == "HEADERS_TOO_LARGE"
    assert not episode_exists(server, "big")  # the reset never ran
