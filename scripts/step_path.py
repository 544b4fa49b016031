"""The package files a REST step passes through, from its route to the grader.

Each step of the original tasks' optimal plans is sent as `POST /step/{task_id}` (with an
episode id, the step memory off, so every step is computed) to the app called as an ASGI
callable in this thread, under `sys.setprofile`; every Python function called is recorded
with the file it lives in, its nearest caller in the package and the package files on the
stack. A step's path is what a reader follows from the route (`server/http/routes/episodes.py`)
to the first call into the grader (`grading/`): the files on the call stack at that call,
from the route down, and every file they call into before it (the stages they hand the
step to: parsing, the store, resolving, checking, the operation, profiling), in order of
first entry. What a stage calls in turn (its helpers: cell parsing, errors, snapshots) is
that stage's own business; the script reports how many files were touched in all beside
it. Middleware before the route and the observation after the grader are not counted.

    uv run python scripts/step_path.py            # the longest path, and every file on it
    uv run python scripts/step_path.py --all      # each step's path

`tests/api/test_step_path.py` keeps the longest path at most `MAX_FILES` files.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PACKAGE = ROOT / "dataclean_env"
ROUTE = "server/http/routes/episodes.py"
GRADER = "grading/"
MAX_FILES = 8  # the bound on a step's path from its route to the grader


def _package_file(filename: str) -> str | None:
    path = Path(filename)
    try:
        return path.resolve().relative_to(PACKAGE.resolve()).as_posix()
    except ValueError:
        return None


class Recorder:
    """Every Python call into a package file while it is on: (the file, the file of the
    nearest package frame it was called from, the package files on the stack)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None, tuple[str, ...]]] = []

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        name = _package_file(frame.f_code.co_filename)
        if name is None:
            return
        stack = []
        caller = frame.f_back
        while caller is not None:
            above = _package_file(caller.f_code.co_filename)
            if above is not None:
                stack.append(above)
            caller = caller.f_back
        self.calls.append((name, stack[0] if stack else None, tuple(reversed(stack))))


Call = tuple[str, str | None, tuple[str, ...]]


def path_to_grader(calls: list[Call]) -> list[str]:
    """The files a step passes through from its route to the grader, in order of first
    entry: the files on the call stack when the grader is first called (from the route
    down), and every file those files call into before then (the stages they hand the
    step to). What a stage calls in turn (its helpers) is the stage's own business."""
    start, end = _span(calls)
    grader_stack = calls[end][2]
    spine = set(grader_stack[grader_stack.index(ROUTE) :])
    entered = [name for name, caller, _ in calls[start:end] if name in spine or caller in spine]
    return list(dict.fromkeys(entered))


def files_touched(calls: list[Call]) -> list[str]:
    """Every package file called from the route's entry to the first grader call."""
    start, end = _span(calls)
    return list(dict.fromkeys(name for name, _, _ in calls[start:end]))


def _span(calls: list[Call]) -> tuple[int, int]:
    start = next(i for i, call in enumerate(calls) if call[0] == ROUTE)
    for end in range(start, len(calls)):
        if calls[end][0].startswith(GRADER):
            return start, end
    raise ValueError("the step never called the grader")


def asgi_scope(app: Any, method: str, path: str, raw: bytes) -> dict[str, Any]:
    """An HTTP request's ASGI scope from 127.0.0.1."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(raw)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 7860),
        "app": app,
    }


async def call(app: Any, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
    """One POST through the ASGI app: its status and body."""
    raw = json.dumps(body).encode()
    sent = False
    status, answer = 0, bytearray()

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            answer.extend(message.get("body", b""))

    await app(asgi_scope(app, "POST", path, raw), receive, send)
    return status, bytes(answer)


def make_app(folder: Path) -> Any:
    from dataclean_env.server.app import create_app
    from dataclean_env.settings import Settings

    settings = Settings(
        step_memory=False,
        creation_rate_per_second=1e6,
        creation_burst=1_000_000,
        leaderboard_db=folder / "board.sqlite3",
        access_log=False,
    )
    return create_app(settings)


def plans() -> dict[str, list[dict[str, Any]]]:
    from dataclean_env.settings import Settings
    from dataclean_env.tasks.fixed import load_metadata

    return {e["task_id"]: e["solution"] for e in load_metadata(Settings().datasets_dir)}


async def traced_steps(app: Any) -> list[tuple[str, str, list[Call]]]:
    """(task, operation, every package file called, in order) for each step of each
    original task's optimal plan, after one untraced episode of each (first-call work)."""
    recorded: list[tuple[str, str, list[Call]]] = []
    for round_ in ("warm", "traced"):
        for task_id, plan in plans().items():
            body = {"episode_id": f"path-{round_}-{task_id}"}
            status, _ = await call(app, f"/reset/{task_id}", body)
            assert status == 200, status
            for action in plan:
                recorder = Recorder()
                on: Callable[..., Any] | None = recorder if round_ == "traced" else None
                sys.setprofile(on)
                try:
                    status, answer = await call(app, f"/step/{task_id}", {**action, **body})
                finally:
                    sys.setprofile(None)
                assert status == 200, answer[:300]
                if on is not None:
                    recorded.append((task_id, action["operation"], recorder.calls))
    return recorded


def step_paths() -> list[tuple[str, str, list[str], list[str]]]:
    """(task, operation, its path from the route to the grader, every file it touched on
    the way) for every traced step that calls the grader (a step that leaves the table as
    it was is not graded again)."""
    with tempfile.TemporaryDirectory() as folder:
        steps = asyncio.run(traced_steps(make_app(Path(folder))))
    return [
        (task_id, operation, path_to_grader(calls), files_touched(calls))
        for task_id, operation, calls in steps
        if any(name.startswith(GRADER) for name, _, _ in calls)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--all", action="store_true", help="print each step's path")
    args = parser.parse_args()
    paths = step_paths()
    if args.all:
        for task_id, operation, files, touched in paths:
            print(
                f"{len(files):2d} ({len(touched)} touched)  {task_id} {operation}: "
                f"{' > '.join(files)}"
            )
    task_id, operation, longest, _ = max(paths, key=lambda p: len(p[2]))
    touched = max(len(p[3]) for p in paths)
    print(
        f"longest path from the route to the grader: {len(longest)} files ({task_id}, "
        f"{operation}); at most {touched} files touched on the way, helpers included"
    )
    for name in longest:
        print(f"  dataclean_env/{name}")
    return 0 if len(longest) <= MAX_FILES else 1


if __name__ == "__main__":
    raise SystemExit(main())
