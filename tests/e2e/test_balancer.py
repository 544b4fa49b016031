"""`server --workers 2`: two processes behind HAProxy, over real sockets on 127.0.0.1.

The test client at 127.0.0.1 is named a trusted proxy (DCE_FORWARDED_ALLOW_IPS), so it
plays several clients by the X-Forwarded-For it sends; an untrusted client connects from
127.0.0.3 (loopback answers the whole 127/8), where nothing it writes is believed."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from dataclean_env.errors import Misdirected
from dataclean_env.server.processes.affinity import Place, home
from tests.e2e.scale_sessions import ROOT, free_port, stop, wait_healthy

UNTRUSTED = "127.0.0.3"
BURST = 3  # resets per client before 429 (refilling at one per ~3 hours)


def start_server(
    tmp_path: Path, extra: dict[str, str] | None = None
) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {
        **os.environ,
        "DCE_LEADERBOARD_DB": str(tmp_path / "board.sqlite3"),
        "DCE_CREATION_BURST": str(BURST),
        "DCE_CREATION_RATE_PER_SECOND": "0.0001",
        "DCE_FORWARDED_ALLOW_IPS": "127.0.0.1",
        **(extra or {}),
    }
    argv = [sys.executable, "-m", "dataclean_env.server.app", "--host", "127.0.0.1"]
    process = subprocess.Popen([*argv, "--port", str(port), "--workers", "2"], cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, process)
    return process, url


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process, url = start_server(tmp_path_factory.mktemp("balancer"))
    try:
        yield url
    finally:
        stop(process)


def homed(index: int, count: int = 1, prefix: str = "id") -> list[str]:
    """`count` ids whose home is process `index` of 2."""
    ids = (f"{prefix}-{n}" for n in range(10_000))
    return [i for i in ids if home(i, 2) == index][:count]


def reset(url: str, client: str, body: bytes | dict, query: str = "") -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        f"{url}/reset{query}",
        content=content,
        headers={"content-type": "application/json", "x-forwarded-for": client},
        timeout=60,
    )


def raw_exchange(url: str, payload: bytes, source: str) -> bytes:
    """Send `payload` from address `source` and read until the server closes."""
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), 60, source_address=(source, 0)) as sock:
        sock.sendall(payload)  # its last request says "Connection: close"
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


# ── the rule ───────────────────────────────────────────────────────────────
@pytest.mark.needs("haproxy")
def test_haproxy_crc32_is_zlib_crc32(tmp_path: Path) -> None:
    """The converter the balancer routes by is the CRC-32 the app checks by."""
    port = free_port()
    config = tmp_path / "crc.cfg"
    config.write_text(
        "defaults\n    mode http\n    timeout client 5s\n    timeout connect 5s\n"
        "    timeout server 5s\nfrontend f\n"
        f"    bind 127.0.0.1:{port}\n"
        '    http-request return status 200 content-type text/plain lf-string "%[url_param(k),'
        'crc32]"\n'
    )
    balancer = subprocess.Popen(["haproxy", "-db", "-f", str(config)])
    try:
        ids = ["a", "lb-0123456789abcdef", "dce.AbC_-xyz", "123e4567-e89b-12d3-a456-426614174000"]
        for _ in range(100):  # until it listens
            try:
                answers = [
                    httpx.get(f"http://127.0.0.1:{port}/", params={"k": i}, timeout=5).text
                    for i in ids
                ]
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert answers == [str(zlib.crc32(i.encode())) for i in ids]
    finally:
        stop(balancer)


@pytest.mark.needs("haproxy")
def test_ids_spelt_so_haproxy_reads_another_cannot_live_on_two_processes(server: str) -> None:
    """HAProxy reads no id (or another id) where the app reads one homed on process 1: the
    call lands on process 0, which answers 421 and makes nothing."""
    one, zero = homed(1, 1, "trick")[0], homed(0, 1, "trick")[0]
    client = "203.0.113.21"
    tricks = [
        (b'{"episode\\u005fid": "%s"}' % one.encode(), ""),  # a JSON escape
        (b"{}", f"?episode%5Fid={one}"),  # a percent-encoded query key
        (b"{}", f"?episode_id={zero}&episode_id={one}"),  # HAProxy: the first; the app: the last
    ]
    for body, query in tricks:
        answer = reset(server, client, body, query)
        assert (answer.status_code, answer.json()["code"]) == (421, "MISDIRECTED"), (body, query)
    # Duplicate body keys: HAProxy's json_query and Python's json may pick either; whichever
    # HAProxy picks, the app serves only the id it read, at that id's home.
    answer = reset(
        server, client, b'{"episode_id": "%s", "episode_id": "%s"}' % (zero.encode(), one.encode())
    )
    assert answer.status_code in (200, 421), answer.text
    # Nothing was made off its home: the id now lives only on process 1, once.
    plain = httpx.get(f"{server}/state", params={"episode_id": one}, timeout=30)
    made = answer.status_code == 200
    assert plain.status_code == (200 if made else 404), plain.text


@pytest.mark.needs("haproxy")
def test_a_limit_holds_across_processes(server: str) -> None:
    """One client's resets, alternating between episodes homed on each process, share one
    burst: a limit per process would let it reset 2 * BURST times."""
    ids = [i for pair in zip(homed(0, BURST), homed(1, BURST), strict=True) for i in pair]
    statuses = [reset(server, "203.0.113.31", {"episode_id": i}).status_code for i in ids]
    assert statuses == [200] * BURST + [429] * BURST


@pytest.mark.needs("haproxy")
def test_the_upgrade_tunnel_is_routed_as_requests_and_forged_chains_move_no_limit(
    server: str,
) -> None:
    """The issue's payload (an Upgrade on /health, then a reset with a forged
    X-Forwarded-For in the same bytes), from an untrusted address, with a new forgery each
    time: the reset is routed by HAProxy and counted against the real client."""
    statuses = []
    for n, episode_id in enumerate([*homed(0, 2, "tunnel"), *homed(1, 2, "tunnel")]):
        body = json.dumps({"episode_id": episode_id}).encode()
        payload = (
            b"GET /health HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n"
            b"POST /reset HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 6.6.6.%d\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (n, len(body), body)
        )
        received = raw_exchange(server, payload, UNTRUSTED)
        assert not received.startswith(b"HTTP/1.1 101"), received[:200]
        statuses.append([int(code) for code in re.findall(rb"HTTP/1\.1 (\d{3}) ", received)])
    # Each exchange: /health answered (not switched), then the reset, counted against
    # 127.0.0.3 whatever it claimed: BURST pass, the next is refused.
    assert statuses == [[200, 200]] * BURST + [[200, 429]]


def as_client(n: int) -> dict[str, str]:
    return {"x-forwarded-for": f"203.0.113.{50 + n}"}  # a socket per client: one burst each


@pytest.mark.needs("haproxy")
def test_a_leaderboard_ws_join_reaches_its_episode(server: str) -> None:
    run = httpx.post(
        f"{server}/leaderboard/runs",
        json={"name": "balancer", "model": "test", "episodes": 2},
        headers={"x-forwarded-for": "203.0.113.41"},
        timeout=60,
    )
    assert run.status_code == 200, run.text
    ids = [e["episode_id"] for e in run.json()["episodes"]]
    ws = server.replace("http://", "ws://")
    # Held open, two plain sockets take one process each (HAProxy: fewest open sessions).
    with (
        connect(f"{ws}/ws", open_timeout=60, additional_headers=as_client(1)) as first,
        connect(f"{ws}/ws", open_timeout=60, additional_headers=as_client(2)) as second,
    ):
        frames = []
        for sock in (first, second):
            sock.send(json.dumps({"type": "reset", "data": {"episode_id": ids[0]}}))
            frame = json.loads(sock.recv(timeout=60))
            frames.append(frame["data"] if frame["type"] == "error" else "joined")
        # The socket on process 1 is refused with REST's 421 code and message.
        with pytest.raises(Misdirected) as rest:
            Place(1, 2).check(ids[0])
        expected = {"message": rest.value.detail, "code": "MISDIRECTED"}
        assert sorted(frames, key=str) == sorted([expected, "joined"], key=str), frames
    for n, episode_id in enumerate(ids):  # named on the URL, a join reaches its episode's home
        url = f"{ws}/ws?episode_id={episode_id}"
        with connect(url, open_timeout=60, additional_headers=as_client(3 + n)) as sock:
            sock.send(json.dumps({"type": "reset", "data": {"episode_id": episode_id}}))
            frame = json.loads(sock.recv(timeout=60))
            assert frame["type"] == "observation", frame
            assert frame["data"]["observation"]["episode_id"] == episode_id


@pytest.mark.needs("haproxy")
def test_caps_and_quotas_hold_across_processes(tmp_path: Path) -> None:
    """Caps of 8 episodes, 2 per client (a quarter of 8, the most a quota may be) and 3
    sessions count both processes together: the processes' shares (1 each) would refuse a
    client's second episode on process 0 and serve its third on process 1."""
    caps = {
        "DCE_MAX_EPISODES": "8",
        "DCE_EPISODES_PER_CLIENT": "2",
        "DCE_MAX_SESSIONS": "3",
        "DCE_CREATION_BURST": "100",
    }
    process, url = start_server(tmp_path, caps)
    try:
        zero, one = homed(0, 6, "cap"), homed(1, 5, "cap")
        statuses = [reset(url, "203.0.113.71", {"episode_id": i}).status_code for i in zero[:2]]
        assert statuses == [200, 200]
        quota = reset(url, "203.0.113.71", {"episode_id": one[0]})
        assert (quota.status_code, quota.json()["code"]) == (503, "CLIENT_QUOTA_REACHED")
        assert quota.headers["retry-after"] == "30"
        assert reset(url, "203.0.113.72", {"episode_id": one[0]}).status_code == 200
        fill = [(74, zero[2]), (74, one[1]), (75, zero[3]), (75, one[2]), (76, zero[4])]
        for client, episode_id in fill:  # eight held, on both processes
            assert reset(url, f"203.0.113.{client}", {"episode_id": episode_id}).status_code == 200
        for episode_id in (zero[5], one[3]):  # full on both processes
            full = reset(url, "203.0.113.73", {"episode_id": episode_id})
            assert (full.status_code, full.json()["code"]) == (503, "SERVER_FULL"), full.text
            assert full.json()["detail"].startswith("the server holds its maximum of 8 episodes")
            assert full.headers["retry-after"].isdigit()
        # Sessions: three sockets held open (on both processes), the fourth is refused.
        ws = url.replace("http://", "ws://")
        with contextlib.ExitStack() as held:
            for n in range(3):
                sock = held.enter_context(
                    connect(f"{ws}/ws", open_timeout=60, additional_headers=as_client(70 + n))
                )
                sock.send(json.dumps({"type": "reset", "data": {}}))
                assert json.loads(sock.recv(timeout=60))["type"] == "observation"
            with connect(f"{ws}/ws", open_timeout=60, additional_headers=as_client(80)) as sock:
                refused = json.loads(sock.recv(timeout=60))  # said before any frame is sent
        assert (refused["type"], refused["data"]["code"]) == ("error", "CAPACITY_REACHED")
    finally:
        stop(process)


# ── the supervisor ──────────────────────────────────────────────────────────
def _is_sandbox_worker(pid: int) -> bool:
    try:
        return b"dataclean_env.sandbox.worker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # already gone
        return False


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pids: set[int]) -> set[int]:
    return {p for p in pids if Path(f"/proc/{p}").exists() and "Z" not in _state(p)}


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def wait_gone(pids: set[int], seconds: float = 60) -> set[int]:
    deadline = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(pids)


@pytest.mark.needs("haproxy")
def test_killing_the_supervisor_stops_every_process(tmp_path: Path) -> None:
    process, _ = start_server(tmp_path)
    children = children_of(process.pid)
    try:
        assert len(children) == 3  # two server processes and HAProxy
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert wait_gone(children) == set()
    finally:
        stop(process)
        for pid in alive(children):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.needs("haproxy")
def test_one_dead_process_stops_them_all(tmp_path: Path) -> None:
    process, _ = start_server(tmp_path)
    children = children_of(process.pid)
    try:
        worker = min(children)  # the first started: a server process
        os.kill(worker, signal.SIGKILL)
        assert process.wait(timeout=60) == 1
        assert wait_gone(children) == set()
    finally:
        stop(process)


def test_without_haproxy_one_process_serves_and_says_how_to_scale(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent),  # python, no haproxy
        "DCE_LEADERBOARD_DB": str(tmp_path / "board.sqlite3"),
    }
    argv = [sys.executable, "-m", "dataclean_env.server.app", "--host", "127.0.0.1"]
    with (tmp_path / "err").open("w") as err:
        process = subprocess.Popen(
            [*argv, "--port", str(port), "--workers", "2"], cwd=ROOT, env=env, stderr=err
        )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", process)
        # No server process but this one (its SQL sandbox worker aside: not a server).
        assert {pid for pid in children_of(process.pid) if not _is_sandbox_worker(pid)} == set()
    finally:
        stop(process)
    said = (tmp_path / "err").read_text()
    assert "haproxy is not on PATH, so this server runs one process" in said
    assert "install HAProxy" in said and "deploy/haproxy.cfg" in said


def on_process_zero(sock) -> bool:
    """Whether a /ws socket is on process 0: joining `lb-x0` (home 0) is refused there as
    unknown, elsewhere as misdirected."""
    sock.send(json.dumps({"type": "reset", "data": {"episode_id": "lb-x0"}}))
    return "lives on process" not in json.loads(sock.recv(timeout=60))["data"]["message"]


@pytest.mark.needs("haproxy")
def test_inference_plays_a_leaderboard_run_behind_the_balancer(server: str) -> None:
    """`inference.py --leaderboard` opens its /ws on its episodes' home (process 0, where the
    id-less POST /leaderboard/runs made them): with one more plain socket held on process 0
    than on process 1, a plain /ws would go to process 1 and every join be misdirected."""
    ws = server.replace("http://", "ws://")
    with contextlib.ExitStack() as held:
        for n in range(8):
            sock = held.enter_context(
                connect(f"{ws}/ws", open_timeout=60, additional_headers=as_client(20 + n))
            )
            if on_process_zero(sock):
                break
            sock.close()
        else:
            raise AssertionError("no plain /ws socket reached process 0")
        command = [sys.executable, "inference.py", "--leaderboard", "team-b"]
        command += ["--agent", "heuristic", "--env-url", server]
        command += ["--family", "fix_types", "--episodes", "2"]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    ends = [line for line in done.stdout.splitlines() if line.startswith("[END]")]
    assert len(ends) == 2, done.stdout[-2000:]
    assert "lives on process" not in done.stdout + done.stderr  # no join was misdirected
    assert re.search(r"Run run-[0-9a-f]+ is complete", done.stderr), done.stderr[-2000:]


@pytest.mark.needs("haproxy")
def test_a_percent_encoded_query_id_reaches_its_home(server: str) -> None:
    """Clients percent-encode ids in a query (httpx writes ':' as %3A): HAProxy decodes the
    value before hashing, as the app does, so the call is served, not misdirected."""
    plain = next(
        i for i in (f"q:{n}" for n in range(100)) if home(i, 2) != home(i.replace(":", "%3A"), 2)
    )
    answer = reset(server, "203.0.113.61", b"{}", f"?episode_id={plain.replace(':', '%3A')}")
    assert answer.status_code == 200, answer.text
    assert answer.json()["observation"]["episode_id"] == plain
