"""Worker processes that run one job at a time under a memory cap, ended when a job runs
past its time.

The SQL sandbox runs DuckDB here rather than in the server: DuckDB's own `memory_limit`
bounds its buffers but not the lists and text a query builds (`len(range(200000000))`
takes 1.6 GB), and a function working through one huge value never looks for an
interrupt. A worker's data segment is capped (`sandbox.worker`), so such a query fails
there as out of memory; a job still running at its time plus a grace is killed with its
process. Either way the worker is replaced and the server keeps serving.

A worker is a fresh interpreter that imports the job modules once and then serves job
after job (about 0.4 s to start); one that a job left holding memory is replaced.
Starting one and waiting for an idle one are not charged to a job's time: its `seconds`
start when it is handed over. A worker that does not take a job within that time (one that
stopped reading) is ended as well.
"""

from __future__ import annotations

import math
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

T = TypeVar("T")
# The folder holding the package, so a worker imports the same code as its starter even
# when that one found the package through sys.path rather than an installed copy.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
STARTUP_SECONDS = 60.0


class WorkerTimedOut(Exception):
    """The job was still running at its time plus the pool's grace; its worker was killed."""


class WorkerUnavailable(Exception):
    """A worker could not be started: the interpreter or a job module failed."""


class WorkerDied(Exception):
    """The worker ended before answering (most likely out of memory outside Python's view)."""


class _Worker:
    def __init__(self, headroom_bytes: int, preload: Sequence[str]):
        ours, theirs = socket.socketpair()
        paths = [_PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")]
        command = [sys.executable, "-m", "dataclean_env.sandbox.worker"]
        with theirs:
            self.process = subprocess.Popen(
                [*command, str(theirs.fileno()), str(headroom_bytes), *preload],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)},
            )
        self.channel = ours  # kept for its send timeout; `jobs` writes to the same socket
        self.jobs = Connection(os.dup(ours.fileno()))
        # Ready once its imports are done and its cap is set: only then do jobs' clocks run.
        try:
            if not self.jobs.poll(STARTUP_SECONDS):
                raise WorkerUnavailable(f"a worker did not start within {STARTUP_SECONDS} s")
            self.jobs.recv()
        except (EOFError, OSError):
            self.end()
            raise WorkerUnavailable(f"a worker failed to start: {_ending(self.process)}") from None
        except WorkerUnavailable:
            self.end()
            raise

    def alive(self) -> bool:
        return self.process.poll() is None

    def hand_over(
        self, job: tuple[Callable[..., Any], tuple[Any, ...]], seconds: float | None
    ) -> None:
        """Send `job`, or WorkerTimedOut if the worker has not taken it all within `seconds`
        (None: no limit); a job larger than the socket's buffers waits for the worker to read."""
        self.channel.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(seconds))
        try:
            self.jobs.send(job)
        except BlockingIOError:  # the send timed out
            raise WorkerTimedOut(f"the worker took no job within {seconds:.2f} s") from None

    def end(self) -> None:
        self.jobs.close()
        self.channel.close()
        if self.alive():
            self.process.kill()
        self.process.wait()


class WorkerPool:
    """At most `size` workers, started when first needed and kept while they are healthy."""

    def __init__(
        self,
        size: int,
        headroom_bytes: int,
        grace_seconds: float,
        preload: Sequence[str] = (),
    ):
        self.size = size
        self.headroom_bytes = headroom_bytes
        self.grace_seconds = grace_seconds
        self.preload = list(preload)
        self._idle: list[_Worker] = []
        self._started = 0
        self._closed = False
        self._changed = threading.Condition()

    def run(self, function: Callable[..., T], *args: Any, seconds: float) -> T:
        """`function(*args)` in a worker, answered within `seconds` (math.inf: untimed) plus
        the grace, or WorkerTimedOut. Its exceptions are raised here."""
        worker = self._take()
        try:
            wait = None if math.isinf(seconds) else seconds + self.grace_seconds
            worker.hand_over((function, args), wait)
            if not worker.jobs.poll(wait):
                raise WorkerTimedOut(f"the job ran past {seconds:.2f} s")
            kind, value, spent = worker.jobs.recv()
        except (EOFError, OSError):
            self._drop(worker)
            raise WorkerDied(_ending(worker.process)) from None
        except BaseException:  # timed out, or the job or its answer did not pickle
            self._drop(worker)
            raise
        if spent:  # it holds memory a fresh worker would not: replaced
            self._drop(worker)
        else:
            self._give_back(worker)
        if kind == "error":
            raise value
        return value  # type: ignore[no-any-return]

    def warm(self) -> None:
        """Start one worker now, so the first job need not wait for one."""
        self._give_back(self._take())

    def close(self) -> None:
        """End every idle worker; a busy one ends when its job is answered."""
        with self._changed:
            self._closed = True
            idle, self._idle = self._idle, []
            self._started -= len(idle)
            self._changed.notify_all()
        for worker in idle:
            worker.end()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _take(self) -> _Worker:
        with self._changed:
            while True:
                if self._closed:
                    raise RuntimeError("the worker pool is closed")
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive():
                        return worker
                    self._started -= 1  # ended while idle (killed from outside)
                    worker.end()
                if self._started < self.size:
                    self._started += 1
                    break
                self._changed.wait()
        try:
            return _Worker(self.headroom_bytes, self.preload)
        except BaseException:
            with self._changed:
                self._started -= 1
                self._changed.notify()
            raise

    def _give_back(self, worker: _Worker) -> None:
        with self._changed:
            if not self._closed:
                self._idle.append(worker)
                self._changed.notify()
                return
            self._started -= 1
        worker.end()

    def _drop(self, worker: _Worker) -> None:
        worker.end()
        with self._changed:
            self._started -= 1
            self._changed.notify()


def _timeval(seconds: float | None) -> bytes:
    """`struct timeval` for SO_SNDTIMEO (zero: no timeout)."""
    whole = 0.0 if seconds is None else max(seconds, 1e-6)
    return struct.pack("ll", int(whole), int(whole % 1 * 1e6))


def _ending(process: subprocess.Popen[bytes]) -> str:
    code = process.returncode
    if code is not None and code < 0:
        return f"the worker was ended by signal {signal.Signals(-code).name}"
    return f"the worker ended with exit code {code}"
