"""`server --workers N`: N uvicorn worker processes behind the affinity front (front.py).

Each worker serves the whole app on its own Unix socket in a private temporary folder; the
front listens on host:port and sends each call to the worker that holds its episode
(`affinity`). Workers share their Prometheus samples through a folder
(`PROMETHEUS_MULTIPROC_DIR`), so /metrics on any of them shows the whole server. A worker
is this module run as a program (`serve_worker`): the app with the same uvicorn options as a
single process (`serving`), its leaderboard database opened before it answers /health. The
supervisor waits until every worker answers /health before it opens the port, restarts
nothing (a dead worker ends the server, so an orchestrator sees it), and stops the workers
when it is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dataclean_env.server import front

STARTUP_SECONDS = 180.0


def _healthy(path: str) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(2)
            sock.connect(path)
            sock.sendall(b"GET /health HTTP/1.1\r\nhost: worker\r\nconnection: close\r\n\r\n")
            return sock.recv(16).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def start_workers(count: int, folder: Path) -> tuple[list[subprocess.Popen[bytes]], list[str]]:
    """Start `count` uvicorn processes on Unix sockets in `folder`; wait for their /health."""
    metrics = folder / "metrics"
    metrics.mkdir()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(metrics)}
    sockets = [str(folder / f"worker-{i}.sock") for i in range(count)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "dataclean_env.server.workers", path],
            env={**env, "DCE_WORKER_INDEX": str(i)},
        )
        for i, path in enumerate(sockets)
    ]
    deadline = time.monotonic() + STARTUP_SECONDS
    waiting = set(range(count))
    while waiting and time.monotonic() < deadline:
        for i in list(waiting):
            if processes[i].poll() is not None:
                stop_workers(processes)
                raise RuntimeError(f"worker {i} exited with code {processes[i].returncode}")
            if _healthy(sockets[i]):
                waiting.discard(i)
        time.sleep(0.05)
    if waiting:
        stop_workers(processes)
        raise RuntimeError(f"workers {sorted(waiting)} did not start in {STARTUP_SECONDS:.0f} s")
    return processes, sockets


def stop_workers(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


async def _run(
    host: str, port: int, sockets: list[str], processes: list[subprocess.Popen[bytes]]
) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    serving = asyncio.create_task(front.serve(host, port, sockets))

    async def watch() -> None:  # a worker that dies ends the server
        while all(p.poll() is None for p in processes):
            await asyncio.sleep(0.5)
        stop.set()

    watcher = asyncio.create_task(watch())
    await stop.wait()
    for task in (serving, watcher):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


def serve_worker(path: str) -> None:
    """One worker: the app on the Unix socket `path`, served as a single process serves it."""
    import uvicorn

    from dataclean_env.server.app import create_app, open_leaderboard
    from dataclean_env.server.serving import behind_front, worker_options
    from dataclean_env.settings import get_settings

    settings = get_settings()
    app = create_app(settings)
    open_leaderboard(app)
    uvicorn.run(behind_front(app, settings), uds=path, **worker_options(settings))


def serve(host: str, port: int, count: int) -> None:
    """Run the front and `count` workers until SIGINT/SIGTERM."""
    folder = Path(tempfile.mkdtemp(prefix="dce-workers-"))
    processes: list[subprocess.Popen[bytes]] = []
    try:
        processes, sockets = start_workers(count, folder)
        print(f"serving on http://{host}:{port} with {count} workers", file=sys.stderr)
        try:
            import uvloop

            uvloop.run(_run(host, port, sockets, processes))
        except ImportError:  # pragma: no cover - uvicorn[standard] brings uvloop
            asyncio.run(_run(host, port, sockets, processes))
    finally:
        stop_workers(processes)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    serve_worker(sys.argv[1])
