"""Where a request's time goes between the socket and `Episode.step`: the app is called as
an ASGI callable (no sockets, no client), over the optimal plans of the original tasks, for
REST (`POST /reset/{task}`, `POST /step/{task}` with episode ids) and for /ws frames.

Prints, per door, the CPU time per request in the app, the engine's share of it (the work
that `routes.episodes.run_sized` runs), both from the fastest of `--rounds` rounds, and the rest (the "wire" overhead: routing, middleware,
parsing, serialising); with `--profile`, the top functions by own time under cProfile.

    uv run python scripts/profile_wire.py
    uv run python scripts/profile_wire.py --profile --door rest
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from benchmark import PLANS  # noqa: E402
from step_path import call  # noqa: E402

from dataclean_env.server.app import create_app  # noqa: E402
from dataclean_env.server.http.routes import episodes  # noqa: E402
from dataclean_env.settings import Settings  # noqa: E402

_engine_cpu = [0.0]


def _timed_cpu(work: Callable[[], Any]) -> Any:
    # episodes._timed, counting CPU time: the machine is shared, and CPU time is what
    # this process spent whatever else ran beside it.
    start = time.process_time()
    try:
        return work()
    finally:
        _engine_cpu[0] += time.process_time() - start


episodes._timed = _timed_cpu


def engine_seconds() -> float:
    return _engine_cpu[0]


async def http(app: Any, path: str, body: dict[str, Any]) -> bytes:
    """One POST through the app (step_path's `call`), which must answer 200."""
    status, answer = await call(app, path, body)
    assert status == 200, (status, answer)
    return answer


async def rest_round(app: Any, n: int) -> int:
    requests = 0
    for task_id, plan in PLANS.items():
        body = {"episode_id": f"wire-{n}-{task_id}"}
        await http(app, f"/reset/{task_id}", body)
        requests += 1
        for action in plan:
            await http(app, f"/step/{task_id}", {**action, **body})
            requests += 1
    return requests


class Socket:
    """One /ws connection driven frame by frame through the ASGI app."""

    def __init__(self, app: Any):
        self.app = app
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def open(self) -> None:
        scope = {
            "type": "websocket",
            "asgi": {"version": "3.0"},
            "path": "/ws",
            "raw_path": b"/ws",
            "query_string": b"",
            "root_path": "",
            "headers": [(b"host", b"127.0.0.1")],
            "client": ("127.0.0.1", 50001),
            "server": ("127.0.0.1", 7860),
            "subprotocols": [],
            "app": self.app,
        }
        self.task = asyncio.create_task(self.app(scope, self.inbox.get, self.outbox.put))
        await self.inbox.put({"type": "websocket.connect"})
        assert (await self.outbox.get())["type"] == "websocket.accept"

    async def call(self, frame: dict[str, Any]) -> str:
        await self.inbox.put({"type": "websocket.receive", "text": json.dumps(frame)})
        return (await self.outbox.get())["text"]

    async def close(self) -> None:
        await self.inbox.put({"type": "websocket.disconnect", "code": 1000})
        await self.task


async def ws_round(socket: Socket) -> int:
    requests = 0
    for task_id, plan in PLANS.items():
        await socket.call({"type": "reset", "data": {"task_id": task_id}})
        requests += 1
        for action in plan:
            answer = await socket.call({"type": "step", "data": action})
            assert '"observation"' in answer, answer[:200]
            requests += 1
    return requests


async def measure(
    one_round: Callable[[int], Awaitable[int]], rounds: int, profile: cProfile.Profile | None
) -> tuple[float, float]:
    """Microseconds per request in the app and in the engine, in the least disturbed round
    (the machine is shared: the fastest round is the one nothing else slowed down)."""
    for n in range(3):  # warm-up
        await one_round(-n - 1)
    best = (float("inf"), 0.0)
    if profile is not None:
        profile.enable()
    for n in range(rounds):
        engine_before = engine_seconds()
        start = time.process_time()
        requests = await one_round(n)
        elapsed = time.process_time() - start
        engine = engine_seconds() - engine_before
        best = min(best, (elapsed / requests * 1e6, engine / requests * 1e6))
    if profile is not None:
        profile.disable()
    return best


async def main_async(args: argparse.Namespace) -> None:
    # Without the per-client creation limit: one client here resets far more often.
    app = create_app(Settings(creation_rate_per_second=1e6, creation_burst=1_000_000))
    app.state.openenv.now()
    for door in args.door:
        profile = cProfile.Profile() if args.profile else None
        if door == "rest":
            total, engine = await measure(lambda n: rest_round(app, n), args.rounds, profile)
        else:
            socket = Socket(app)
            await socket.open()
            total, engine = await measure(lambda n, s=socket: ws_round(s), args.rounds, profile)
            await socket.close()
        print(
            f"{door}: {total:.0f} µs CPU per request in the app, engine {engine:.0f} µs, "
            f"the rest {total - engine:.0f} µs"
        )
        if profile is not None:
            pstats.Stats(profile).sort_stats(args.sort).print_stats(args.top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--door", nargs="+", choices=("rest", "ws"), default=["rest", "ws"])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--top", type=int, default=40)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
