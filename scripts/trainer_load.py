"""What a trainer meets: many `/ws` sessions from one host, and episodes in one process.

`sessions_load` opens N WebSocket sessions at once from this process (asyncio, one
connection each, as TRL's and verifiers' rollouts do) and has each play whole episodes:
steps/s, p50/p99 step latency, and the server's CPU per step. The same load runs against
OpenEnv's own echo environment (`openenv init`'s template, with as many concurrent
sessions allowed as asked), the ceiling of the protocol stack on this machine.

`in_process` plays the suite's generated instances through `DataCleaningEnv` (reset and the
reference plan) beside the floor: a bare pandas copy of the table per reset and per step.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from dataclean_env.in_process import DataCleaningEnv
from dataclean_env.tasks import default_registry

# The generated families a GRPO run trains on, train split.
FAMILIES = ("fix_types", "normalize_dedupe", "full_pipeline", "crm", "orders", "inventory")
ECHO_MESSAGE = "x" * 64
GROUP = 8  # rollouts of one GRPO group: sessions that play the same instances


@dataclass(frozen=True)
class Episode:
    """One episode a session plays: what its reset sends and the steps after it."""

    reset: dict[str, Any]
    steps: tuple[dict[str, Any], ...]


def generated_episodes(count: int, session: int = 0, group: int = GROUP) -> list[Episode]:
    """`count` train instances of the generated families in turn for the `session`-th
    session, each with its reference plan (built here, in the load generator). Sessions
    come in GRPO groups of `group` that play the same instances; no two groups do."""
    registry = default_registry()
    first = session // group
    episodes = []
    for n in range(count):
        family, seed = FAMILIES[(first + n) % len(FAMILIES)], 1000 * first + n
        plan = registry.make(family, seed, "train").reference_plan
        reset = {"task_id": family, "seed": seed, "split": "train"}
        episodes.append(Episode(reset, tuple(plan)))
    return episodes


def echo_episodes(like: list[Episode]) -> list[Episode]:
    """Episodes of the echo environment with the same number of steps as `like`."""
    step = {"message": ECHO_MESSAGE}
    return [Episode({}, (step,) * len(e.steps)) for e in like]


async def _session(url: str, episodes: list[Episode], latencies: list[float]) -> int:
    steps = 0
    async with connect(url, open_timeout=120, max_size=None, ping_interval=None) as ws:
        for episode in episodes:
            await ws.send(json.dumps({"type": "reset", "data": episode.reset}))
            _check(await ws.recv())
            for action in episode.steps:
                sent = time.perf_counter()
                await ws.send(json.dumps({"type": "step", "data": action}))
                _check(await ws.recv())
                latencies.append(time.perf_counter() - sent)
                steps += 1
    return steps


def _check(answer: str | bytes) -> None:
    if (b'"type":"error"' if isinstance(answer, bytes) else '"type":"error"') in answer:
        raise RuntimeError(f"refused: {answer[:300]!r}")


def sessions_load(
    base_url: str, sessions: int, plays: list[list[Episode]], cpu: Callable[[], float]
) -> dict[str, float]:
    """`sessions` concurrent /ws sessions, session i playing `plays[i]`: steps/s over the
    whole run, p50/p99 step latency (ms) and server CPU ms per step (`cpu`: its seconds)."""
    url = base_url.replace("http://", "ws://") + "/ws"
    latencies: list[float] = []

    async def run() -> int:
        counts = await asyncio.gather(
            *(_session(url, plays[i], latencies) for i in range(sessions))
        )
        return sum(counts)

    cpu_before, start = cpu(), time.perf_counter()
    steps = asyncio.run(run())
    elapsed, cpu_used = time.perf_counter() - start, cpu() - cpu_before
    cuts = statistics.quantiles(latencies, n=100)
    return {
        "sessions": sessions,
        "steps": steps,
        "rate": steps / elapsed,
        "p50_ms": 1000 * cuts[49],
        "p99_ms": 1000 * cuts[98],
        "cpu_ms": 1000 * cpu_used / steps,
    }


@contextmanager
def echo_app(sessions: int) -> Iterator[tuple[Path, str]]:
    """OpenEnv's echo environment as `openenv init` writes it, allowed `sessions` concurrent
    sessions (the template's `max_concurrent_envs`, which its comment says to raise): the
    folder to serve from and the app's import path."""
    with tempfile.TemporaryDirectory(prefix="echo-env-") as folder:
        openenv = Path(sys.executable).parent / "openenv"
        subprocess.run(
            [str(openenv), "init", "echo_env", "-o", folder], check=True, capture_output=True
        )
        app = Path(folder) / "echo_env" / "server" / "app.py"
        text = app.read_text()
        if "max_concurrent_envs=1," not in text:
            raise RuntimeError("openenv's template no longer sets max_concurrent_envs=1")
        app.write_text(text.replace("max_concurrent_envs=1,", f"max_concurrent_envs={sessions},"))
        yield Path(folder), "echo_env.server.app:app"


def in_process(episodes: list[Episode], rounds: int) -> dict[str, float]:
    """Episodes per second of `DataCleaningEnv` over `episodes` (reset and plan), and of the
    floor (a pandas copy of the dirty table per reset and per step), best of `rounds`."""
    registry = default_registry()
    env = DataCleaningEnv(registry=registry)
    tables = [registry.make(e.reset["task_id"], e.reset["seed"], "train").dirty for e in episodes]

    def ours() -> None:
        for episode in episodes:
            env.reset(**episode.reset)
            for action in episode.steps:
                env.step(action)

    def floor() -> None:
        for episode, table in zip(episodes, tables, strict=True):
            for _ in range(1 + len(episode.steps)):
                table.copy()

    return {
        "ours": _best_rate(ours, len(episodes), rounds),
        "floor": _best_rate(floor, len(episodes), rounds),
    }


def _best_rate(play: Callable[[], None], episodes: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        play()
        best = min(best, time.perf_counter() - start)
    return episodes / best


def section(ours: dict[str, float], echo: dict[str, float], local: dict[str, float]) -> list[str]:
    """The report's section: the two servers side by side and the in-process rates."""
    share = 100 * ours["rate"] / echo["rate"]
    rows = [
        f"| {name} | {r['sessions']:.0f} | {r['steps']:.0f} | {r['rate']:.0f} | "
        f"{r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['cpu_ms']:.2f} |"
        for name, r in (("ours, generated families", ours), ("OpenEnv echo", echo))
    ]
    return [
        f"## Trainers: {ours['sessions']:.0f} /ws sessions from one host",
        "",
        "Every session opens at once and plays whole episodes (ours: train instances of the "
        f"generated families with their reference plans, in GRPO groups of {GROUP} sessions "
        "that play the same instances; echo: as many 64-character messages). "
        "The load generator is one asyncio process on the same machine.",
        "",
        "Steps/s count the steps over the whole run, resets included in its time; the "
        "latencies are of steps; the server's CPU is per step, its resets included.",
        "",
        "| server | sessions | steps | steps/s | p50 ms | p99 ms | server CPU ms/step |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Ours runs at **{share:.0f}%** of the echo's rate (goal ≥ 50%).",
        "",
        "In one process, `DataCleaningEnv` (reset and the reference plan) beside the floor, a "
        "bare pandas copy of the dirty table per reset and per step:",
        "",
        "| in process | episodes/s |",
        "|---|---|",
        f"| `DataCleaningEnv` | {local['ours']:.1f} |",
        f"| pandas copy (floor) | {local['floor']:.1f} |",
        "",
    ]


def goal_row(ours: dict[str, float], echo: dict[str, float]) -> str:
    share = 100 * ours["rate"] / echo["rate"]
    return (
        f"| {ours['sessions']:.0f} /ws sessions from one host vs OpenEnv's echo | ≥ 50% | "
        f"**{share:.0f}%** ({ours['rate']:.0f} vs {echo['rate']:.0f} steps/s) |"
    )
