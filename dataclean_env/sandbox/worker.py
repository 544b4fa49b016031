"""A sandbox worker's main: `python -m dataclean_env.sandbox.worker FD HEADROOM [MODULE ...]`.

It imports the job modules named and runs each one's `warm_up()` if it has one, so what
they allocate once (DuckDB's first database) is not counted against a job; then it caps its
data segment HEADROOM bytes above what it holds (`RLIMIT_DATA`: an allocation past it
fails as out of memory) and answers each (function, args) read from the socket FD with
(kind, value, spent): ("ok", result) or ("error", exception), and whether the job left the
worker holding more than `KEPT_GROWTH` bytes beyond its start (DuckDB's allocator keeps
what a large query took, and the next job would have that much less room). Such a worker
is replaced, so the next job starts with the whole headroom again; a table of 100,000
rows leaves less than `KEPT_GROWTH`, so its worker is kept from step to step.

A fresh interpreter rather than a fork: it holds no thread, connection or `__main__` of
the process that started it.
"""

from __future__ import annotations

import importlib
import signal
import socket
import sys
from multiprocessing.connection import Connection
from typing import Any

KEPT_GROWTH = 128 * 2**20


def main(argv: list[str]) -> None:
    fd, headroom, *modules = argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's; it ends us
    for name in modules:
        warm_up = getattr(importlib.import_module(name), "warm_up", None)
        if warm_up is not None:
            warm_up()
    start = data_bytes()
    if start is not None:
        cap_data(start + int(headroom))
    jobs = Connection(socket.socket(fileno=int(fd)).detach())
    try:
        jobs.send(("ready", None, False))
    except OSError:  # the process that started us ended while we imported
        return
    serve(jobs, None if start is None else start + KEPT_GROWTH)


def serve(jobs: Connection, most_kept: int | None) -> None:
    while True:
        try:
            function, args = jobs.recv()
        except EOFError:  # the pool closed, or the process that started us ended
            return
        try:
            answer: tuple[str, Any] = ("ok", function(*args))
        except BaseException as exc:  # every failure goes back to the caller
            answer = ("error", exc)
        spent = most_kept is not None and (data_bytes() or 0) > most_kept
        try:
            jobs.send((*answer, spent))
        except Exception as exc:  # an answer that cannot be pickled
            failed = RuntimeError(f"the job's answer could not be sent: {exc!r}")
            jobs.send(("error", failed, spent))


def cap_data(limit: int) -> None:
    """Let the data segment grow to at most `limit` bytes (where the system has the limit)."""
    try:
        import resource
    except ImportError:  # not POSIX: no cap; the pool's time limit still holds
        return
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def data_bytes() -> int | None:
    """This process's data segment (VmData) in bytes; None where /proc does not give it."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


if __name__ == "__main__":
    main(sys.argv[1:])
