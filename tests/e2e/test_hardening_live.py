"""Issue 11 on the wire, against a real uvicorn on 127.0.0.1 with real sockets:

* /health answers in milliseconds while the issue's catastrophic regex step runs (REST and
  /ws), and that step is refused within the step time limit;
* connections that send their headers too slowly (slowloris) are closed;
* the body limit holds for a chunked body on /mcp.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from dataclean_env.settings import Settings
from tests.web import LiveServer

TASK = "crm"


@pytest.fixture
def server() -> Iterator[LiveServer]:
    with LiveServer(Settings(header_seconds=1.0, body_seconds=1.0)) as live:
        yield live


def plant_catastrophic_cells(client: httpx.Client) -> None:
    """20 cells of "a"*350+"!" in the victim's full_name column: the issue's payload."""
    client.post(f"/reset/{TASK}", json={"seed": 0, "episode_id": "victim"}).raise_for_status()
    shown = client.post(
        f"/step/{TASK}",
        json={"operation": "show_rows", "parameters": {"limit": 20}},
        params={"episode_id": "victim"},
    ).json()
    plant = [
        {
            "operation": "set_cell",
            "parameters": {
                "row_id": r["contact_id"],
                "column": "full_name",
                "value": "a" * 350 + "!",
            },
        }
        for r in shown["observation"]["sample_rows"]
    ]
    client.post(
        f"/step/{TASK}",
        json={"operation": "program", "parameters": {"operations": plant}},
        params={"episode_id": "victim"},
    ).raise_for_status()


REDOS = {
    "operation": "regex_replace",
    "parameters": {"column": "full_name", "pattern": "(a|aa)+$", "replacement": "x"},
}
PROGRAM = {"operation": "program", "parameters": {"operations": [REDOS] * 20}}


def health_calls(url: str, stop: threading.Event) -> list[tuple[float, float]]:
    """(sent, answered) on the monotonic clock of every /health call until `stop`."""
    calls = []
    with httpx.Client(base_url=url, timeout=30) as client:
        while not stop.is_set():
            sent = time.monotonic()
            assert client.get("/health").status_code == 200
            calls.append((sent, time.monotonic()))
            time.sleep(0.01)
    return calls


def answered_inside(calls: list[tuple[float, float]], start: float, end: float) -> int:
    """/health calls sent and answered while the step ran. A blocked event loop answers
    none: a call sent during the step waits for its end. The step lasts at least the
    regex module's 0.5 s per-cell limit (wall time, on any machine), about a hundred
    times a /health call, so the verdict does not hang on the machine's speed."""
    return sum(1 for sent, answered in calls if start < sent and answered < end)


def test_health_answers_while_the_catastrophic_step_runs(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        plant_catastrophic_cells(client)
        stop = threading.Event()
        result: dict[str, list[tuple[float, float]]] = {}
        poller = threading.Thread(target=lambda: result.update(h=health_calls(server.url, stop)))
        poller.start()
        try:
            time.sleep(0.1)
            started = time.monotonic()
            answer = client.post(f"/step/{TASK}", json=PROGRAM, params={"episode_id": "victim"})
            ended = time.monotonic()
        finally:
            stop.set()
            poller.join(timeout=30)
    assert answer.status_code == 422 and answer.json()["code"] == "STEP_TIME_LIMIT"
    # Bounded: DCE_STEP_SECONDS is 2 and the first cell's 0.5 s limit fires; unbounded,
    # `(a|aa)+$` on 350 a's would not end in the life of the machine.
    assert ended - started < 60
    assert answered_inside(result["h"], started, ended) >= 1, result["h"]


def test_health_answers_while_a_ws_step_runs(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        plant_catastrophic_cells(client)
    ws_url = server.url.replace("http", "ws") + "/ws"
    stop = threading.Event()
    result: dict[str, list[tuple[float, float]]] = {}
    with connect(ws_url) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_id": TASK, "seed": 0}}))
        first = json.loads(ws.recv())["data"]["observation"]
        row = first["sample_rows"][0]["contact_id"]
        ws.send(
            json.dumps(
                {
                    "type": "step",
                    "data": {
                        "operation": "set_cell",
                        "parameters": {
                            "row_id": row,
                            "column": "full_name",
                            "value": "a" * 350 + "!",
                        },
                    },
                }
            )
        )
        json.loads(ws.recv())
        poller = threading.Thread(target=lambda: result.update(h=health_calls(server.url, stop)))
        poller.start()
        try:
            time.sleep(0.1)
            started = time.monotonic()
            ws.send(json.dumps({"type": "step", "data": PROGRAM}))
            answer = json.loads(ws.recv(timeout=60))
            ended = time.monotonic()
        finally:
            stop.set()
            poller.join(timeout=30)
    # One planted cell is enough: the pattern's per-cell limit fires on it.
    # A refused /ws step answers an observation of the unchanged episode with the error.
    refused = answer["data"]["observation"]
    assert answer["type"] == "observation" and refused["step"] == 1, answer
    assert refused["info"]["error"]["code"] == "STEP_TIME_LIMIT", refused["info"]
    assert answered_inside(result["h"], started, ended) >= 1, result["h"]


def test_slow_headers_are_cut_off(server: LiveServer) -> None:
    """Slowloris: 50 sockets that trickle their headers are closed after DCE_HEADER_SECONDS
    (1 s here); a normal request meanwhile is answered."""
    sockets = []
    for _ in range(50):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        sockets.append(sock)
    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline:  # keep trickling, as slowloris does
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.sendall(b"X-a: b\r\n")
        assert httpx.get(f"{server.url}/health", timeout=5).status_code == 200
        time.sleep(0.25)
    closed = 0
    for sock in sockets:
        sock.settimeout(2)
        try:
            closed += sock.recv(1024) == b""
        except (ConnectionResetError, BrokenPipeError):
            closed += 1
        finally:
            sock.close()
    assert closed == 50


def read_answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    sock.settimeout(30)
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


def test_headers_past_their_limit_are_answered_431_and_the_connection_closed(
    server: LiveServer,
) -> None:
    # Before, httptools buffered any amount (50 MB of one header took the server 80 MB up).
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ")
        with contextlib.suppress(OSError):  # the server may close while this is sent
            for _ in range(64):
                sock.sendall(b"a" * 65536)  # 4 MiB, and the header never ends
        answer = read_answer(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert json.loads(body)["code"] == "HEADERS_TOO_LARGE"
    assert httpx.get(f"{server.url}/health", timeout=5).status_code == 200


@pytest.mark.parametrize(
    "request_head",
    [
        b"POST /step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n",
        b"GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n",
    ],
    ids=["POST", "GET"],
)
def test_trailers_past_the_header_limit_close_the_connection(
    server: LiveServer, request_head: bytes
) -> None:
    # Trailer lines after a chunked body were kept without bound (5 GB in 15 s).
    sent = 0
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(request_head)
        with contextlib.suppress(OSError):  # the server closes while this is sent
            while sent < 2**25:  # 32 MiB of trailers, and the message never ends
                sock.sendall(b"X-T: " + b"a" * 4000 + b"\r\n")
                sent += 4007
        read_answer(sock)  # the server closed the connection
    assert sent < 2**25
    assert httpx.get(f"{server.url}/health", timeout=5).status_code == 200


def test_a_body_that_never_ends_closes_its_connection(server: LiveServer) -> None:
    # A GET is answered without its body being read; the body then trickled on forever and
    # held the connection (the body timeout answers only the requests that read theirs).
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        sock.settimeout(0.2)
        answer, closed, deadline = b"", False, time.monotonic() + 30
        while not closed and time.monotonic() < deadline:  # a byte every 0.2 s while open
            try:
                sock.sendall(b"x")
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                closed = True
                break
            closed = not chunk
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:100]
    assert closed  # by the server, within the body timeout (1 s here), not after 30 s


def test_a_websocket_outlives_the_body_timeout(server: LiveServer) -> None:
    # Its connection is upgraded when its headers are read: no body timer may close it.
    url = server.url.replace("http://", "ws://") + "/ws"
    with connect(url, open_timeout=60) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"
        time.sleep(3)  # past the body timeout (1 s) and its grace
        ws.send(json.dumps({"type": "state"}))
        assert json.loads(ws.recv(timeout=60))["type"] == "state"


def test_headers_within_their_limit_and_a_large_body_are_served(server: LiveServer) -> None:
    # 32 KiB of headers, then a body near the body limit in one send: nothing is refused.
    headers = {"x-cookie": "c" * 32_000}
    assert httpx.get(f"{server.url}/health", headers=headers, timeout=30).status_code == 200
    body = json.dumps({"seed": 0, "pad": "p" * 900_000}).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(
            b"POST /reset/crm HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        answer = read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 422 "), answer[:200]  # "pad" is no reset option
    assert b"pad" in answer


def test_chunked_body_over_the_limit_on_mcp(server: LiveServer) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b" " * 100_000  # 4 MB, no content-length

    response = httpx.post(
        f"{server.url}/mcp",
        content=chunks(),
        headers={"content-type": "application/json"},
        timeout=30,
    )
    assert response.status_code == 413 and response.json()["code"] == "BODY_TOO_LARGE"


def test_slow_body_is_answered_408(server: LiveServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        sock.sendall(
            b"POST /reset/crm HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{"
        )
        started = time.monotonic()
        answer = sock.recv(4096)
        assert time.monotonic() - started < 30  # body_seconds is 1; without a cut-off, never
    assert answer.startswith(b"HTTP/1.1 408")
    assert b"REQUEST_TIMEOUT" in answer


def test_idle_websocket_is_closed_on_the_wire() -> None:
    live = LiveServer(Settings(ws_idle_seconds=0.5)).start()
    try:
        with connect(live.url.replace("http", "ws") + "/ws") as ws:
            ws.send(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
            assert json.loads(ws.recv(timeout=10))["type"] == "observation"
            started = time.monotonic()
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=60)
            assert 0.4 < time.monotonic() - started < 30
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
        deadline = time.monotonic() + 5
        while live.app.state.openenv.active_sessions and time.monotonic() < deadline:
            time.sleep(0.05)
        assert live.app.state.openenv.active_sessions == 0
    finally:
        live.close()
