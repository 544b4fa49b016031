"""`server --workers N`: N server processes behind one HAProxy, and the supervisor of both.

The supervisor makes a private run folder, starts process i (`server/worker.py` as a program,
`serve_worker`) on the Unix socket `p<i>.sock` there with DCE_PROCESS_INDEX=i and
DCE_PROCESSES=N, waits until each answers /health, then writes `haproxy.cfg`
(`balancer.config`) and starts HAProxy on host:port. The processes share their Prometheus
samples (`PROMETHEUS_MULTIPROC_DIR`, so /metrics on any shows the whole server) and their
rate limits and caps (DCE_LIMITS_DB, a fresh SQLite file in the folder, so a restart of the
supervisor starts with nothing counted). It restarts nothing: when any
child exits, it stops the others and exits 1 (an orchestrator sees it); SIGTERM or SIGINT
stop them all. Each child is told by the kernel to end when the supervisor dies
(PR_SET_PDEATHSIG), so even `kill -9` of the supervisor leaves no process behind.

Without `haproxy` on PATH (a plain `pip install`) the supervisor is not used: `main` says
so, and how to scale, and serves one process.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dataclean_env.server.processes.balancer import config
from dataclean_env.settings import get_settings

STARTUP_SECONDS = 180.0
NO_BALANCER = (
    "--workers {count}: haproxy is not on PATH, so this server runs one process. To scale, "
    "install HAProxy (Debian/Ubuntu: apt-get install haproxy; the Docker image has it), or "
    "run replicas behind your own balancer with deploy/haproxy.cfg (docs/deployment.md)."
)
PR_SET_PDEATHSIG = 1
# What each process runs as a program (it imports the app, which sits above `processes/`).
WORKER_MODULE = "dataclean_env.server.worker"


def balancer_available() -> bool:
    return shutil.which("haproxy") is not None


def _end_with_parent() -> None:
    """In a child, before exec: the kernel sends SIGTERM when the supervisor dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: children end with a clean stop only
        return
    if os.getppid() == 1:  # the supervisor died before the call
        os._exit(1)


def _spawn(argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, env=env, preexec_fn=_end_with_parent)


def _healthy(path: str) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(2)
            sock.connect(path)
            sock.sendall(b"GET /health HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
            return sock.recv(16).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host if host != "0.0.0.0" else "127.0.0.1", port), 2):
            return True
    except OSError:
        return False


def start_workers(count: int, folder: Path) -> tuple[list[subprocess.Popen[bytes]], list[str]]:
    """Start `count` server processes on Unix sockets in `folder`; wait for their /health."""
    metrics = folder / "metrics"
    metrics.mkdir()
    env = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(metrics),
        "DCE_PROCESSES": str(count),
        "DCE_LIMITS_DB": str(folder / "limits.sqlite3"),
    }
    sockets = [str(folder / f"p{i}.sock") for i in range(count)]
    processes = [
        _spawn(
            [sys.executable, "-m", WORKER_MODULE, path],
            {**env, "DCE_PROCESS_INDEX": str(i)},
        )
        for i, path in enumerate(sockets)
    ]
    deadline = time.monotonic() + STARTUP_SECONDS
    waiting = set(range(count))
    while waiting and time.monotonic() < deadline:
        for i in list(waiting):
            if processes[i].poll() is not None:
                stop_all(processes)
                raise RuntimeError(f"process {i} exited with code {processes[i].returncode}")
            if _healthy(sockets[i]):
                waiting.discard(i)
        time.sleep(0.05)
    if waiting:
        stop_all(processes)
        raise RuntimeError(f"processes {sorted(waiting)} did not start in {STARTUP_SECONDS:.0f} s")
    return processes, sockets


def stop_all(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Stop(Exception):
    pass


def _stop(signum: int, frame: object) -> None:
    raise Stop


def serve(host: str, port: int, count: int) -> int:
    """Run `count` processes behind HAProxy until one ends (1) or SIGINT/SIGTERM (0)."""
    folder = Path(tempfile.mkdtemp(prefix="dce-server-"))
    children: list[subprocess.Popen[bytes]] = []
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        children, sockets = start_workers(count, folder)
        cfg = folder / "haproxy.cfg"
        servers = [f"unix@{path}" for path in sockets]
        cfg.write_text(config(f"{host}:{port}", servers, get_settings()))
        children.append(_spawn(["haproxy", "-db", "-f", str(cfg)]))
        deadline = time.monotonic() + 30
        while not _listening(host, port) and children[-1].poll() is None:
            if time.monotonic() > deadline:
                raise RuntimeError(f"haproxy did not listen on {host}:{port} in 30 s")
            time.sleep(0.05)
        print(f"serving on http://{host}:{port}: {count} processes behind HAProxy", file=sys.stderr)
        while all(child.poll() is None for child in children):
            time.sleep(0.2)
        ended = next(i for i, c in enumerate(children) if c.poll() is not None)
        what = f"process {ended}" if ended < count else "haproxy"
        code = children[ended].returncode
        print(f"{what} exited with code {code}: stopping the others", file=sys.stderr)
        return 1
    except Stop:
        return 0
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second signal must not cut the stop
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop_all(children)
        shutil.rmtree(folder, ignore_errors=True)
