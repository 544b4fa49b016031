"""Speed and memory of the environment; writes docs/BENCHMARKS.md.

    uv run python scripts/benchmark.py                         # engine, HTTP, memory
    uv run python scripts/benchmark.py --baseline "original=http://127.0.0.1:7861"
        # also drive another server that speaks the original per-task API (for example the
        # original CleanifyAI server started by hand) with the same loop, and compare

Engine time is the time inside `Episode.step` (operation, snapshot, grading, observation).
HTTP and /ws rates are whole optimal-plan episodes (reset + steps) against a real uvicorn
on 127.0.0.1, sequential and with concurrent clients, counting steps per second.
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import httpx
from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dataclean_env.episode import Episode  # noqa: E402
from dataclean_env.operations.program import opened  # noqa: E402
from dataclean_env.schemas import Action  # noqa: E402
from dataclean_env.settings import Settings  # noqa: E402
from dataclean_env.tasks import Task, default_registry  # noqa: E402
from dataclean_env.tasks.fixed import load_metadata  # noqa: E402

PLANS = {e["task_id"]: e["solution"] for e in load_metadata(Settings().datasets_dir)}


def time_plan(make_task: Callable[[], Task], plan: list[dict], repeats: int) -> dict[str, float]:
    """Engine time of each step of `plan` and of the reset, warm, over `repeats` episodes."""
    actions = [Action(**a) for a in plan]
    step_times, reset_times = [], []
    for i in range(repeats + 3):
        start = time.perf_counter()
        episode = Episode(f"bench-{i}", make_task())
        reset_time = time.perf_counter() - start
        times = []
        for action in actions:
            start = time.perf_counter()
            episode.step(action)
            times.append(time.perf_counter() - start)
        if i >= 3:  # warm-up
            step_times.extend(times)
            reset_times.append(reset_time)
    return {
        "steps": len(step_times),
        "median_us": statistics.median(step_times) * 1e6,
        "mean_us": statistics.fmean(step_times) * 1e6,
        "p95_us": statistics.quantiles(step_times, n=20)[18] * 1e6,
        "reset_us": statistics.median(reset_times) * 1e6,
    }


def engine(repeats: int) -> dict[str, dict[str, float]]:
    """The fixed tasks' optimal plans, then one hard instance (100-200 rows) of each
    generated family with its own solution, one operation per step (programs opened up)."""
    registry = default_registry()
    results = {
        task_id: time_plan(lambda t=task_id: registry.make(t, None), plan, repeats)
        for task_id, plan in PLANS.items()
    }
    for spec in registry.specs():
        if spec.family != "generated":
            continue
        seed = next(
            s
            for s in range(100)
            if registry.make(spec.task_id, s, "eval").spec.difficulty == "hard"
        )
        task = registry.make(spec.task_id, seed, "eval")
        plan = opened(task.solution)
        label = f"{spec.task_id} (eval seed {seed}, {len(task.dirty)} rows)"
        results[label] = time_plan(
            lambda t=spec.task_id, s=seed: registry.make(t, s, "eval"), plan, repeats
        )
    return results


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server() -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "main:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("server did not start")


BASELINE_NOTES = [
    "## How the baselines were run",
    "",
    "The original CleanifyAI server (the public repository ReverseCoder1/CleanifyAI at its",
    "last stored commit: three tasks, one shared episode per task, the reward re-reading",
    "`dirty.csv` on each step) was checked out outside this repository and started from its",
    "own folder with this project's virtual environment: `python -m uvicorn main:app --port",
    "7861 --loop asyncio --http h11` (what its plain `uvicorn` dependency gives it) and again",
    "with `--loop uvloop --http httptools` (our server's stack), then measured with the same",
    "loop as ours: for each task it serves, a reset and our optimal plan's steps, one request",
    "at a time over one kept-alive connection. Nothing of it is part of this repository.",
    "",
    "Numbers move by about 30% between runs on these shared 2-core machines; the ratio,",
    "measured within one run, moves less.",
    "",
]


def served_tasks(url: str) -> list[str]:
    tasks = httpx.get(f"{url}/tasks", timeout=10).json()["tasks"]
    return [t["task_id"] for t in tasks if t["task_id"] in PLANS]


def steps_per_second(client: Callable[[int], None], clients: int, counts: list[int]) -> float:
    """Run `client(i)` in `clients` threads at once; steps counted per client per second."""
    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.perf_counter() - start)


def drive(url: str, episodes: int, clients: int, with_ids: bool, tasks: list[str]) -> float:
    """Steps per second over `episodes` optimal-plan episodes of each task, per client.

    Answers are not checked: another server may refuse or ignore some of our plan's steps,
    which still costs it a request like any other."""
    counts = [0] * clients
    host, port = url.removeprefix("http://").rsplit(":", 1)

    def client(index: int) -> None:
        # http.client on one kept-alive connection: the lightest client, so that the
        # numbers measure the server rather than the client library.
        connection = http.client.HTTPConnection(host, int(port), timeout=30)

        def post(path: str, body: dict) -> None:
            connection.request("POST", path, json.dumps(body), {"content-type": "application/json"})
            connection.getresponse().read()

        for n in range(episodes):
            for task_id in tasks:
                body = {"episode_id": f"bench-{index}-{n}-{task_id}"} if with_ids else {}
                post(f"/reset/{task_id}", body)
                for action in PLANS[task_id]:
                    post(f"/step/{task_id}", {**action, **body})
                    counts[index] += 1
        connection.close()

    return steps_per_second(client, clients, counts)


def drive_ws(url: str, episodes: int, clients: int) -> float:
    """Steps per second over /ws, one WebSocket session per client thread."""
    counts = [0] * clients
    ws_url = url.replace("http://", "ws://") + "/ws"

    def client(index: int) -> None:
        with connect(ws_url) as ws:
            for _ in range(episodes):
                for task_id, plan in PLANS.items():
                    ws.send(json.dumps({"type": "reset", "data": {"task_id": task_id}}))
                    ws.recv()
                    for action in plan:
                        ws.send(json.dumps({"type": "step", "data": action}))
                        ws.recv()
                        counts[index] += 1

    return steps_per_second(client, clients, counts)


def memory_per_episode(count: int) -> float:
    registry = default_registry()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = []
    for i in range(count):
        task_id = list(PLANS)[i % len(PLANS)]
        held.append(Episode(f"m{i}", registry.make(task_id, i)))
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / count


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="another server with the original per-task API (repeatable)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    args = parser.parse_args()

    engine_results = engine(args.repeats)
    baselines = dict(item.split("=", 1) for item in args.baseline)
    common = list(PLANS)
    for url in baselines.values():
        common = [t for t in common if t in served_tasks(url)]
    process, url = start_server()
    try:
        drive(url, 3, 1, True, list(PLANS))  # warm-up: first-request code paths, caches
        sequential = drive(url, args.episodes, 1, True, list(PLANS))
        concurrent = drive(url, max(1, args.episodes // 2), 8, True, list(PLANS))
        legacy = drive(url, args.episodes, 1, False, common)
        ws_single = drive_ws(url, args.episodes, 1)
        ws_many = drive_ws(url, max(1, args.episodes // 2), 8)
    finally:
        process.terminate()
        process.wait(timeout=10)
    for url in baselines.values():
        drive(url, 3, 1, False, common)  # the same warm-up for every server
    baseline_rates = {
        name: drive(url, args.episodes, 1, False, common) for name, url in baselines.items()
    }
    memory = memory_per_episode(1000)

    lines = [
        "# Benchmarks",
        "",
        f"Produced by `uv run python scripts/benchmark.py{' --baseline ...' if baselines else ''}` "
        f"on {time.strftime('%Y-%m-%d')}: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Machines here are shared, "
        "so read the numbers as orders of magnitude; rerun the script to compare.",
        "",
        "## Engine time per step (inside `Episode.step`, optimal plan, warm)",
        "",
        "The four original tasks, then a hard instance of each generated family.",
        "",
        "| task | steps timed | median µs | mean µs | p95 µs | reset µs |",
        "|---|---|---|---|---|---|",
    ]
    for task_id, r in engine_results.items():
        lines.append(
            f"| {task_id} | {r['steps']} | {r['median_us']:.0f} | {r['mean_us']:.0f} | "
            f"{r['p95_us']:.0f} | {r['reset_us']:.0f} |"
        )
    lines += [
        "",
        "## HTTP step rate (real uvicorn on 127.0.0.1, one worker)",
        "",
        "| client | steps/s |",
        "|---|---|",
        f"| 1 client, per-episode ids | {sequential:.0f} |",
        f"| 8 concurrent clients, per-episode ids | {concurrent:.0f} |",
        f"| 1 client, no episode ids (default episode per task; tasks: {', '.join(common)}) "
        f"| {legacy:.0f} |",
    ]
    lines += [
        f"| OpenEnv /ws, 1 session | {ws_single:.0f} |",
        f"| OpenEnv /ws, 8 concurrent sessions | {ws_many:.0f} |",
    ]
    for name, rate in baseline_rates.items():
        lines.append(f"| 1 client, {name}, the same loop | {rate:.0f} |")
    for name, rate in baseline_rates.items():
        lines += ["", f"Ratio to {name}: **{legacy / rate:.1f}x** the step rate."]
    lines += [
        "",
        "## Memory",
        "",
        f"Python heap per live episode (tracemalloc, 1000 episodes over the four tasks): "
        f"**{memory / 1024:.1f} KiB**.",
        "",
    ]
    if baselines:
        lines += BASELINE_NOTES
    text = "\n".join(lines)
    old = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
    if "<!-- real-tables:begin -->" in old:  # scripts/benchmark_real_tables.py's section
        text += "\n" + old[old.index("<!-- real-tables:begin -->") :]
    args.out.write_text(text, encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
