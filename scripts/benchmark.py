"""Speed and scale of the environment, side by side with the original CleanifyAI server and
a bare FastAPI app, in one run; writes docs/BENCHMARKS.md and the plots beside it.

    uv run python scripts/benchmark.py --cleanify /path/to/CleanifyAI
        # the original server's checkout, with its own virtual environment in .venv
        # (see "How the baselines were run" in docs/BENCHMARKS.md); without --cleanify
        # the comparisons with it are left out
    uv run python scripts/benchmark.py --quick   # fewer repeats, for a smoke run
    uv run python scripts/benchmark.py --only scaling clients   # some sections; updates just those
    uv run python scripts/benchmark.py --only real_scale   # the 50,000-row real table alone
    git worktree add /tmp/before 6603a4f && \
    uv run python scripts/benchmark.py --only client --before /tmp/before --cleanify ...
        # one client's step rate, the step memory off, of another checkout of this project
        # (before a change) beside this one (after it) and CleanifyAI, in one run

Measured: engine time per step (inside `Episode.step`) on the original tasks and the
generated families; step cost against table size up to 100,000 rows; one HTTP client's
step rate against CleanifyAI's and the bare endpoint's; one /ws session against a bare
WebSocket echo; time from launch to the first /health for each server; throughput and
latency against concurrent clients for one process and for `server --workers 2`; memory per
episode; a 50,000-row real table (load, reset, set_cells and no-op steps, grading, memory).
Every server runs on 127.0.0.1 and is stopped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import replace
from itertools import count
from pathlib import Path
from typing import Any

import httpx
from tqdm import tqdm
from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import pandas as pd  # noqa: E402
import trainer_load  # noqa: E402
from loadgen import load  # noqa: E402

from dataclean_env.engine.episode import Episode  # noqa: E402
from dataclean_env.engine.step_memory import StepMemory  # noqa: E402
from dataclean_env.operations import OpContext, resolve  # noqa: E402
from dataclean_env.operations.program import opened  # noqa: E402
from dataclean_env.schemas import Action  # noqa: E402
from dataclean_env.server.store.episode_store import EpisodeStore  # noqa: E402
from dataclean_env.settings import Settings  # noqa: E402
from dataclean_env.table.limits import untimed_limits  # noqa: E402
from dataclean_env.table.snapshot import Snapshot  # noqa: E402
from dataclean_env.tasks import Task, default_registry  # noqa: E402
from dataclean_env.tasks.custom import CustomFamily  # noqa: E402
from dataclean_env.tasks.fixed import load_metadata  # noqa: E402
from tests.dirty_pair import write_conflict_pair  # noqa: E402

PLANS = {e["task_id"]: e["solution"] for e in load_metadata(Settings().datasets_dir)}
SIZES = [100, 1_000, 10_000, 100_000]
CLIENTS = [1, 4, 16, 64]
PROGRESS = {"file": sys.stderr, "disable": None}


# ── engine ──────────────────────────────────────────────────────────────────
def engine_lines(results: dict[str, dict[str, float]]) -> list[str]:
    """The engine section's table."""
    lines = [
        "| task | steps timed | median µs | mean µs | p95 µs | reset µs | median µs, steps taken before |",
        "|---|---|---|---|---|---|---|",
    ]
    for task_id, r in results.items():
        again = r.get("again_median_us")
        lines.append(
            f"| {task_id} | {r['steps']} | {r['median_us']:.0f} | {r['mean_us']:.0f} | "
            f"{r['p95_us']:.0f} | {r['reset_us']:.0f} | {'' if again is None else f'{again:.0f}'} |"
        )
    return lines


def time_plan(
    make_task: Callable[[], Task],
    plan: list[dict],
    repeats: int,
    memory: StepMemory | None = None,
) -> dict[str, float]:
    """Engine time of each step of `plan` and of the reset, warm, over `repeats` episodes
    that share `memory` (None: every step computed)."""
    actions = [Action(**a) for a in plan]
    step_times, reset_times = [], []
    for i in range(repeats + 3):
        start = time.perf_counter()
        episode = Episode(f"bench-{i}", make_task(), memory=memory)
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


def unshared(task: Task) -> Task:
    """The task as a new instance: its own opening, and no step another episode took from
    it (`dataclean_env/engine/step_memory.py`) to take over: every step is computed."""
    return replace(task)


def engine(repeats: int) -> dict[str, dict[str, float]]:
    """The fixed tasks' optimal plans, then one hard instance of each generated family. Each
    episode is a new instance (nothing computed before is reused); for the fixed tasks also
    the same plan on one shared instance, whose steps other episodes already took."""
    registry = default_registry()
    results = {}
    specs = [s for s in registry.specs() if s.family == "generated"]
    for task_id, plan in tqdm(PLANS.items(), desc="engine: fixed tasks", **PROGRESS):
        shared = registry.make(task_id, None)
        results[task_id] = time_plan(lambda t=shared: unshared(t), plan, repeats)
        again = time_plan(lambda t=shared: t, plan, repeats, StepMemory())
        results[task_id]["again_median_us"] = again["median_us"]
    for spec in tqdm(specs, desc="engine: generated families", **PROGRESS):
        seed = next(
            s
            for s in range(100)
            if registry.make(spec.task_id, s, "eval").spec.difficulty == "hard"
        )
        task = registry.make(spec.task_id, seed, "eval")
        label = f"{spec.task_id} (eval seed {seed}, {len(task.dirty)} rows)"
        results[label] = time_plan(
            lambda t=task: unshared(t), opened(task.reference_plan), max(3, repeats // 3)
        )
    return results


def tiled_task(folder: Path, rows: int) -> Path:
    """The hard task's table tiled to `rows` rows (fresh order ids per tile), as a custom
    task folder with its tiled gold table."""
    source = Settings().datasets_dir / "hard"
    read = {"keep_default_na": False, "na_values": [""]}
    dirty, gold = (
        pd.read_csv(source / "dirty.csv", **read),
        pd.read_csv(source / "gold.csv", **read),
    )
    tiles = -(-rows // len(dirty))

    def tile(table: pd.DataFrame) -> pd.DataFrame:
        parts = [table.assign(order_id=table["order_id"] + 100_000 * i) for i in range(tiles)]
        return pd.concat(parts, ignore_index=True)

    dirty = tile(dirty).head(rows)
    gold = tile(gold)
    gold = gold[gold["order_id"].isin(dirty["order_id"])]
    task = folder / f"orders_{rows}"
    task.mkdir()
    dirty.to_csv(task / "dirty.csv", index=False)
    gold.to_csv(task / "clean.csv", index=False)
    (task / "task.json").write_text('{"key": "order_id"}')
    return task


def scaling(sizes: list[int]) -> dict[int, dict[str, float]]:
    """Median and largest step time of the hard task's plan on tables of `sizes` rows."""
    plan = [Action(**a) for a in PLANS["hard_full_pipeline"]]
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for rows in tqdm(sizes, desc="engine: table size", **PROGRESS):
            folder = Path(scratch) / str(rows)
            folder.mkdir()
            task_dir = tiled_task(folder, rows)
            family = CustomFamily([folder])
            repeats = max(3, min(20, 20_000 // rows))
            times, cpu, resets = [], [], []
            for _ in range(repeats):
                start = time.perf_counter()
                episode = Episode("scale", family.make(task_dir.name, None))
                resets.append(time.perf_counter() - start)
                for action in plan:
                    start, start_cpu = time.perf_counter(), time.process_time()
                    episode.step(action)
                    times.append(time.perf_counter() - start)
                    cpu.append(time.process_time() - start_cpu)
            cells = rows * 8
            results[rows] = {
                "cells": cells,
                "median_ms": statistics.median(times) * 1e3,
                "median_cpu_ms": statistics.median(cpu) * 1e3,
                "max_ms": max(times) * 1e3,
                "reset_ms": statistics.median(resets) * 1e3,
                "us_per_cell": statistics.median(times) * 1e6 / cells,
            }
    return results


def memory_per_episode(count: int, seeded: bool = True) -> float:
    """Python heap per live episode over the four tasks: each a new instance (a seed of its
    own), or (`seeded=False`) all of one instance per task, sharing its opening."""
    registry = default_registry()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = []
    for i in range(count):
        task_id = list(PLANS)[i % len(PLANS)]
        held.append(Episode(f"m{i}", registry.make(task_id, i if seeded else None)))
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / count


REAL_ROWS, REAL_WRONG = 50_000, 0.4


def timed(run: Callable[[], object]) -> tuple[float, float]:
    """(wall ms, CPU ms of this process) that `run()` takes."""
    start, start_cpu = time.perf_counter(), time.process_time()
    run()
    return (time.perf_counter() - start) * 1e3, (time.process_time() - start_cpu) * 1e3


def medians(times: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def real_scale(repeats: int) -> dict[str, Any]:
    """A 50,000-row real table (tests/dirty_pair.py's generator, 40% of its cells wrong,
    sources conflicting over entities) loaded as a custom task: load, reset, the reference
    plan's steps, no-op steps, grading a set_cells step against grading the whole table,
    and the memory an episode holds. Engine time is measured, so no step time limit."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "reports"
        wrong = write_conflict_pair(folder, REAL_ROWS, REAL_WRONG)
        families: list[CustomFamily] = []
        load = timed(lambda: families.append(CustomFamily([folder.parent])))
    family = families[0]
    spec, plan = family.tasks["reports"].spec, family.tasks["reports"].plan

    def reset() -> Episode:  # under the default limits, as a server's resets are
        return Episode("reset", family.make("reports", None))

    first_reset = timed(reset)  # computes the table's opening, which later resets share
    resets = medians([timed(reset) for _ in range(repeats)])
    episode = Episode("plan", family.make("reports", None), untimed_limits())
    batches, graded = [], {}
    for action in plan:
        if action["operation"] == "set_cells" and batches and not graded:
            graded = grading(episode, action["parameters"])
        took = timed(lambda a=action: episode.step(Action(**a)))
        if action["operation"] == "set_cells":
            batches.append(took)
    f1 = episode.info()["repair"]["f1"]
    row = episode.snapshot.values["id"][0]
    same = {"row_id": row, "column": "city", "value": episode.snapshot.values["city"][0]}
    noops = {}
    for name, parameters in (("set_cells", {"cells": [same]}), ("show_rows", {"offset": 0})):
        action = Action(operation=name, parameters=parameters)
        noops[name] = medians([timed(lambda a=action: episode.step(a)) for _ in range(repeats)])
    gc.collect()
    tracemalloc.start()
    held = tracemalloc.get_traced_memory()[0]
    measured = Episode("memory", family.make("reports", None), untimed_limits())
    gc.collect()
    at_reset = tracemalloc.get_traced_memory()[0] - held
    for action in plan:
        measured.step(Action(**action))
    gc.collect()
    at_end = tracemalloc.get_traced_memory()[0] - held
    tracemalloc.stop()
    return {
        "rows": REAL_ROWS,
        "cells": REAL_ROWS * len(spec.target_schema),
        "wrong": wrong,
        "budget": spec.max_steps,
        "plan_steps": len(plan),
        "set_cells_steps": len(batches),
        "f1": f1,
        "load": load,
        "first_reset": first_reset,
        "reset": resets,
        "set_cells": medians(batches),
        "set_cells_max": max(batches),
        "noop_set_cells": noops["set_cells"],
        "show_rows": noops["show_rows"],
        **graded,
        "memory_reset_mib": at_reset / 2**20,
        "memory_end_mib": at_end / 2**20,
    }


def grading(episode: Episode, batch: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """A set_cells batch applied to the episode's table (not committed) and graded as a
    step grades it (the cells it touched, the grader holding the counts of the table before,
    as after any step), then the table it gives graded whole (no column cached)."""
    op, params = resolve("set_cells", batch)
    context = OpContext(snapshot=episode.snapshot, protected_columns=episode.spec.protected_columns)
    result = op.apply(episode.table, params, context)
    grader = episode.task.grader
    touched = timed(lambda: grader.counts(result.snapshot))
    whole = Snapshot.of(result.table)
    return {"graded_touched": touched, "graded_whole": timed(lambda: grader.counts(whole))}


def real_scale_section(r: dict[str, Any]) -> list[str]:
    def ms(pair: tuple[float, float]) -> str:
        places = 0 if pair[0] >= 100 else 1 if pair[0] >= 1 else 3
        return " | ".join(f"{t:.{places}f}" for t in pair)

    return [
        "## A 50,000-row real table",
        "",
        f"A generated dirty/clean pair (`tests/dirty_pair.py`, `write_conflict_pair`): "
        f"{r['rows']:,} rows of flight reports, {r['cells']:,} cells, {r['wrong']:,} of them "
        f"wrong ({REAL_WRONG:.0%}; conflicting sources, typos, missing-value tokens, format "
        f"variants), loaded as a custom task. Its step budget, computed from the table, is "
        f"{r['budget']}; the reference plan takes {r['plan_steps']} steps "
        f"({r['set_cells_steps']} `set_cells` batches) and reaches F1 {r['f1']:.4f}. "
        "Milliseconds, wall and CPU of this process (medians; the machine is shared, so wall "
        "time includes waiting for a core, CPU time is what the work costs).",
        "",
        "| what | wall ms | CPU ms |",
        "|---|---|---|",
        f"| load the folder (read both CSVs, build the grader and the plan) | {ms(r['load'])} |",
        f"| first reset (the table's opening: snapshot, profiles, grading) | "
        f"{ms(r['first_reset'])} |",
        f"| later reset (the opening shared) | {ms(r['reset'])} |",
        f"| `set_cells` step, 1,000 cells | {ms(r['set_cells'])} |",
        f"| the slowest `set_cells` step | {ms(r['set_cells_max'])} |",
        f"| no-op `set_cells` (a cell set to what it holds) | {ms(r['noop_set_cells'])} |",
        f"| `show_rows` (the table unchanged) | {ms(r['show_rows'])} |",
        f"| grading one `set_cells` step (the cells it touched) | {ms(r['graded_touched'])} |",
        f"| grading the same table whole (no cached column) | {ms(r['graded_whole'])} |",
        "",
        f"Memory (tracemalloc, Python heap): an episode holds **{r['memory_reset_mib']:.2f} "
        f"MiB** after its reset (the task's table and opening are shared) and "
        f"**{r['memory_end_mib']:.0f} MiB** after the whole plan (the repaired columns and "
        "the history of its parameters).",
        "",
        "A step reads and grades only what changed: columns a step leaves alone keep their "
        "value lists, and the grader, the profiles and the text budget keep what they "
        "computed on them; a `set_cells` step is graded and budgeted by the cells it touched "
        "(`Edit` in `table/snapshot.py`). The profile of a column it changed is computed "
        "again whole, and the observation's missing counts read every column again: most "
        "of such a step's time.",
    ]


STORE_SIZES = (10, 250, 1000)


def reset_cost(held: int, repeats: int = 5, resets: int = 200) -> float:
    """Median µs of a reset by id in an episode store holding `held` episodes of four
    clients (each reset replaces one of them, as a client reusing its ids does)."""
    store = EpisodeStore(default_registry(), capacity=1024, ttl_seconds=3600, per_client=256)
    for i in range(held):
        store.reset("easy_dedup_rename", None, f"e{i}", client=f"10.0.{i % 4}.1")
    mine = [f"e{i}" for i in range(0, held, 4)]  # the ids of client 10.0.0.1
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for n in range(resets):
            store.reset("easy_dedup_rename", None, mine[n % len(mine)], client="10.0.0.1")
        times.append((time.perf_counter() - start) / resets * 1e6)
    return statistics.median(times)


# ── servers ─────────────────────────────────────────────────────────────────
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float | None:
    """CPU time a process has used (user + system, all its threads; Linux /proc), or None
    once it is gone: unlike wall time, it hardly moves with the load others put on a
    shared machine."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def measured_load(server: Server, clients: int, steps: int) -> dict:
    """`load`'s summary, plus CPU milliseconds per request of the server's main process
    (with HAProxy's under `--workers`), its server processes, and this process (the load
    generator)."""
    before, mine = server.cpu_by_role(), time.process_time()
    result = load(server.url, clients, steps, PLANS).summary()
    after, mine = server.cpu_by_role(), time.process_time() - mine
    per_request = 1000 / max(1, result["requests"])
    result["cpu_ms"] = {role: (after[role] - before[role]) * per_request for role in after} | {
        "loadgen": mine * per_request
    }
    return result


def warm_openenv(url: str) -> None:
    """Wait until OpenEnv's routes are mounted (each process imports it in the background
    after start-up: seconds of CPU that must not fall into a measured round). /metadata
    needs the mount; episode ids in the header spread the calls over every worker."""
    for n in range(8):
        httpx.get(f"{url}/metadata", headers={"X-Episode-Id": f"warm-{n}"}, timeout=120)


class Server:
    """A server process on 127.0.0.1; `started` is how long it took to answer /health."""

    def __init__(self, argv: list[str], cwd: Path, port: int, env: dict[str, str] | None = None):
        self.url = f"http://127.0.0.1:{port}"
        start = time.perf_counter()
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=None if env is None else {**os.environ, **env},
        )
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{argv} exited with {self.process.returncode}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    self.started = time.perf_counter() - start
                    self.cpu = cpu_seconds(self.process.pid)
                    return
            except httpx.HTTPError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"{argv} did not answer /health")

    def cpu_by_role(self) -> dict[str, float]:
        """CPU seconds (user + system) so far of this server's process with HAProxy ("main":
        the balancer under `--workers N`) and of its server processes ("children"), from
        /proc; empty where there is none."""
        own = cpu_seconds(self.process.pid)
        if own is None:
            return {}
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        kids = [int(p) for p in children.read_text().split()] if children.exists() else []
        balancer = [k for k in kids if _command(k) == "haproxy"]
        servers = [k for k in kids if k not in balancer]
        return {
            "main": own + sum(cpu_seconds(k) or 0.0 for k in balancer),
            "children": sum(cpu_seconds(k) or 0.0 for k in servers),
        }

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def ours(
    workers: int = 1,
    step_memory: bool = True,
    extra: dict[str, str] | None = None,
    checkout: Path = ROOT,
) -> Server:
    """Our server; from another `checkout` of this project (`--before`), that checkout's
    package, with its own `.venv` if it has one, else this interpreter (its folder first on
    the path, so its `dataclean_env` is the one imported)."""
    port = free_port()
    python = checkout / ".venv" / "bin" / "python"
    interpreter = str(python) if checkout != ROOT and python.exists() else sys.executable
    argv = [interpreter, "-m", "dataclean_env.server.app", "--host", "127.0.0.1"]
    # One client resets far more often than the per-client creation limit allows: the
    # benchmark measures serving, not the rate limiter's 429s. No access log, as the other
    # servers here run (--log-level warning).
    unlimited = {
        "DCE_CREATION_RATE_PER_SECOND": "1000000",
        "DCE_CREATION_BURST": "1000000",
        "DCE_ACCESS_LOG": "false",
        "DCE_STEP_MEMORY": str(step_memory).lower(),
        **({"PYTHONPATH": str(checkout)} if checkout != ROOT else {}),
        **(extra or {}),
    }
    return Server(
        [*argv, "--port", str(port), "--workers", str(workers)], checkout, port, unlimited
    )


def echo(sessions: int) -> contextlib.AbstractContextManager[Server]:
    """OpenEnv's echo environment (`trainer_load.echo_app`) under uvicorn on 127.0.0.1."""

    @contextlib.contextmanager
    def serving() -> Iterator[Server]:
        with trainer_load.echo_app(sessions) as (folder, app):
            port = free_port()
            argv = [sys.executable, "-m", "uvicorn", "--app-dir", str(folder), app]
            with Server([*argv, "--port", str(port), "--log-level", "warning"], folder, port) as s:
                yield s

    return serving()


def trainers(sessions: int, episodes: int, runs: int) -> tuple[dict, dict, dict]:
    """`sessions` /ws sessions from this host against ours and OpenEnv's echo, alternating,
    each keeping its best round; then the in-process rates."""
    plays = [trainer_load.generated_episodes(episodes, session=i) for i in range(sessions)]
    echo_plays = [trainer_load.echo_episodes(p) for p in plays]
    best: dict[str, dict] = {}
    # the local profile's default: no per-client quota, so one host may hold every session
    extra = {"DCE_MAX_SESSIONS": str(max(sessions, Settings().max_sessions))}
    with ours(extra=extra) as server, echo(sessions) as echoing:
        cpu = {"ours": server, "echo": echoing}
        for _ in tqdm(range(runs), desc="servers: trainers", **PROGRESS):
            for name, played in (("ours", plays), ("echo", echo_plays)):
                pid = cpu[name].process.pid
                result = trainer_load.sessions_load(
                    cpu[name].url, sessions, played, lambda pid=pid: cpu_seconds(pid) or 0.0
                )
                if name not in best or result["rate"] > best[name]["rate"]:
                    best[name] = result
    local = trainer_load.in_process(trainer_load.generated_episodes(60, group=1), runs)
    return best["ours"], best["echo"], local


def bare() -> Server:
    port = free_port()
    argv = [sys.executable, "-m", "uvicorn", "--app-dir", "scripts", "bare_app:app"]
    return Server([*argv, "--port", str(port), "--log-level", "warning"], ROOT, port)


def cleanify(folder: Path) -> Server:
    """The original server, from its own folder with its own virtual environment (its
    pinned FastAPI, uvicorn without extras: asyncio loop, h11)."""
    port = free_port()
    python = folder / ".venv" / "bin" / "python"
    argv = [str(python), "-m", "uvicorn", "main:app", "--port", str(port)]
    return Server([*argv, "--log-level", "warning"], folder, port)


def served_tasks(url: str) -> list[str]:
    tasks = httpx.get(f"{url}/tasks", timeout=10).json()["tasks"]
    return [t["task_id"] for t in tasks if t["task_id"] in PLANS]


def engine_seconds(url: str) -> float:
    """Our server's engine time so far (`dce_engine_seconds_sum` on /metrics)."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return next(
        float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("dce_engine_seconds_sum")
    )


def without_engine(url: str, measure: Callable[[], tuple[int, float]]) -> float:
    """Steps per second of `measure` (steps, seconds) with our engine's time taken out: what
    the transport (client, server, framework, our routes) alone would allow."""
    before = engine_seconds(url)
    steps, elapsed = measure()
    return steps / (elapsed - (engine_seconds(url) - before))


_SEEDS = count(1_000)  # a seed no earlier reset used: a new instance of a fixed task


def drive(url: str, episodes: int, tasks: list[str], with_ids: bool, **options: bool) -> float:
    """Steps per second of `run_http` (`options`: its `fresh` and `checked`)."""
    steps, elapsed = run_http(url, episodes, tasks, with_ids, **options)
    return steps / elapsed


def run_http(
    url: str,
    episodes: int,
    tasks: list[str],
    with_ids: bool,
    fresh: bool = False,
    checked: bool = True,
) -> tuple[int, float]:
    """One client, one kept-alive connection: steps and seconds over optimal-plan episodes.
    `fresh`: each reset asks for a seed never used before, so each episode is a new instance
    (its rows shuffled) and the server computes every step.

    `checked`: every answer must be a 200 (a refusal is cheaper than a step, and would pass
    for speed). Another server's answers are not checked (`checked=False`): it may refuse or
    ignore some of our plan's steps, which still costs it a request like any other."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    steps = 0

    def post(path: str, body: dict) -> None:
        connection.request("POST", path, json.dumps(body), {"content-type": "application/json"})
        response = connection.getresponse()
        answer = response.read()
        if checked and response.status != 200:
            raise RuntimeError(f"{path} answered {response.status}: {answer[:200]!r}")

    start = time.perf_counter()
    for n in range(episodes):
        for task_id in tasks:
            body = {"episode_id": f"bench-{n}-{task_id}"} if with_ids else {}
            post(f"/reset/{task_id}", {**body, "seed": next(_SEEDS)} if fresh else body)
            for action in PLANS[task_id]:
                post(f"/step/{task_id}", {**action, **body})
                steps += 1
    elapsed = time.perf_counter() - start
    connection.close()
    return steps, elapsed


def drive_ws(url: str, episodes: int, expect_observation: bool) -> float:
    """Steps per second of `run_ws`."""
    steps, elapsed = run_ws(url, episodes, expect_observation)
    return steps / elapsed


def run_ws(url: str, episodes: int, expect_observation: bool) -> tuple[int, float]:
    """One /ws session: steps and seconds over optimal-plan episodes of the four tasks."""
    steps = 0
    with connect(url.replace("http://", "ws://") + "/ws", open_timeout=60) as ws:
        start = time.perf_counter()
        for _ in range(episodes):
            for task_id, plan in PLANS.items():
                ws.send(json.dumps({"type": "reset", "data": {"task_id": task_id}}))
                ws.recv()
                for action in plan:
                    ws.send(json.dumps({"type": "step", "data": action}))
                    answer = ws.recv()
                    if expect_observation and '"observation"' not in answer:
                        raise RuntimeError(answer[:200])
                    steps += 1
        return steps, time.perf_counter() - start


# ── report ──────────────────────────────────────────────────────────────────
def machine() -> str:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or platform.machine(),
    )
    memory = next(
        (
            int(line.split()[1]) / 1024 / 1024
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        0.0,
    )
    return (
        f"{model}, {os.cpu_count()} cores, {memory:.0f} GiB, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}, pandas {pd.__version__}"
    )


def plot_scaling(results: dict[int, dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(results)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(rows, [results[r]["median_ms"] for r in rows], "o-", label="median step")
    ax.loglog(rows, [results[r]["max_ms"] for r in rows], "s--", label="slowest step")
    # Through the largest table: below it a step's fixed costs show as the gap above the line.
    linear = [results[rows[-1]]["median_ms"] * r / rows[-1] for r in rows]
    ax.loglog(rows, linear, ":", color="grey", label="linear in cells")
    ax.axhline(250, color="red", lw=0.8, label="250 ms goal at 100k rows")
    ax.set_xlabel("rows (8 columns)")
    ax.set_ylabel("engine time per step (ms)")
    ax.set_title("Step cost against table size (hard task's plan)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_throughput(results: dict[str, dict[int, dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for name, by_clients in results.items():
        clients = list(by_clients)
        left.plot(clients, [by_clients[c]["rate"] for c in clients], "o-", label=name)
        right.plot(clients, [by_clients[c]["p99_ms"] for c in clients], "o-", label=name)
    for ax, label in ((left, "requests per second"), (right, "p99 latency (ms)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("concurrent clients")
        ax.set_ylabel(label)
        ax.legend()
    right.axhline(100, color="red", lw=0.8)
    fig.suptitle("Throughput and latency against clients (REST, optimal plans)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def client_goal_row(rate: dict[str, float]) -> str:
    """The goal row of one HTTP client against CleanifyAI, from the run's steps/s. The goal
    counts computed steps (the step memory off); the serving path's own rate (the engine's
    time taken out) says how much of a step the goal leaves the engine."""
    base = rate["CleanifyAI"]
    off = rate["ours, episode ids, step memory off"]
    serving = rate["ours, episode ids, step memory off, engine time taken out"]
    step_us, serving_us = 1e6 / (10 * base), 1e6 / serving
    return (
        f"| one HTTP client vs CleanifyAI | ≥ 10x, every step computed | "
        f"**{off / base:.1f}x** (episode ids, the step memory off). The serving path alone "
        f"(engine time taken out) allows {serving / base:.1f}x: 10x leaves the engine "
        f"{step_us - serving_us:.0f} µs of a step's {step_us:.0f}, and it takes "
        f"{1e6 / off - serving_us:.0f}. With the step memory "
        f"{rate['ours, no ids (default episodes)'] / base:.1f}x (no ids, as its clients call "
        f"it) and {rate['ours, episode ids'] / base:.1f}x (episode ids), "
        f"{rate['ours, episode ids, a new instance every episode'] / base:.1f}x with a new "
        "instance every episode (its reset included) |"
    )


def revision(checkout: Path) -> str:
    """The checkout's commit (short hash), or its folder's name outside git."""
    done = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else checkout.name


def before_after_section(
    before: tuple[str, float], after: tuple[str, float], cleanify: float | None
) -> list[str]:
    """Report lines: one client's steps/s with the step memory off (every step computed),
    of the checkout before a change and this one after it, as (commit, rate), each also
    as a multiple of CleanifyAI's rate in the same run when it ran."""
    header = ["| checkout | steps/s |", "|---|---|"]
    rows = [
        f"| before ({before[0]}) | {before[1]:.0f} |",
        f"| after ({after[0]}) | {after[1]:.0f} |",
    ]
    if cleanify:
        header = ["| checkout | steps/s | vs CleanifyAI |", "|---|---|---|"]
        rows = [
            f"| before ({before[0]}) | {before[1]:.0f} | {before[1] / cleanify:.1f}x |",
            f"| after ({after[0]}) | {after[1]:.0f} | {after[1] / cleanify:.1f}x |",
            f"| CleanifyAI | {cleanify:.0f} | 1.0x |",
        ]
    return [
        "## Before and after (one client, the step memory off)",
        "",
        "One client, episode ids, every step computed (`DCE_STEP_MEMORY=false`), the same "
        "plans as the table above, in the same alternating rounds (`--before`): another "
        "checkout of this project served from its own folder beside this one.",
        "",
        *header,
        *rows,
        "",
        f"After / before: **{after[1] / before[1]:.2f}x**.",
    ]


def goal_row(big: dict[str, float]) -> str:
    return (
        f"| 100,000-row step | < 250 ms | median {big['median_ms']:.0f} ms, slowest "
        f"{big['max_ms']:.0f} ms |"
    )


def size_section(results: dict[int, dict[str, float]]) -> list[str]:
    lines = [
        "## Step cost against table size",
        "",
        "The hard task's table tiled to each size (8 columns, fresh ids per tile, a custom "
        "task graded by the cell-repair grader), its plan's steps timed in the engine "
        "(wall time).",
        "",
        "| rows | cells | median ms | median CPU ms | slowest ms | reset ms | µs per cell |",
        "|---|---|---|---|---|---|---|",
    ]
    for rows, r in results.items():
        lines.append(
            f"| {rows:,} | {r['cells']:,} | {r['median_ms']:.1f} | {r['median_cpu_ms']:.1f} | "
            f"{r['max_ms']:.1f} | {r['reset_ms']:.1f} | {r['us_per_cell']:.2f} |"
        )
    return [*lines, "", "![step cost](step_cost.png)"]


SECTIONS = ("engine", "scaling", "memory", "cold", "client", "clients", "trainers", "real_scale")
# The other checkout's server (`--before`) among section client's servers and measures.
BEFORE = "before, episode ids, step memory off"
# How the header of a report names a later run of some of its sections (`--only`).
AGAIN = "Measured again by "


def run_sections(line: str) -> set[str]:
    """The sections a header line naming a run of some of them (`AGAIN`) measured: the
    words after its command's `--only`."""
    command = line.split("`", 2)[1]
    return set(command.split(" --only ", 1)[1].split())


def merge_report(old: str, new: str) -> str:
    """`old` with the sections of `new` (matched by heading, up to its first " (") and the
    goal rows of `new` (matched by their first cell) put in their place, and the header's
    line naming the run (`AGAIN`) added: a run of some sections (`--only`) updates those
    and leaves the rest of the report as it was."""

    def blocks(text: str) -> list[list[str]]:
        result: list[list[str]] = [[]]
        for line in text.split("\n"):
            if line.startswith("## "):
                result.append([])
            result[-1].append(line)
        return result

    def key(block: list[str]) -> str:
        return block[0].split(" (", 1)[0] if block and block[0].startswith("## ") else ""

    fresh = {key(b): b for b in blocks(new)[1:]}
    fresh.pop("## How the baselines were run", None)  # old's holds other scripts' sections
    merged = blocks(old)
    # The header names each later run of some sections. A run rewrote every section an
    # earlier run measured when it measured them all, whatever its other options
    # (--cleanify, --before): the earlier run's line then names nothing left and goes.
    again = [line for line in blocks(new)[0] if line.startswith(AGAIN)]
    if again:
        measured = set().union(*map(run_sections, again))
        kept = [
            line
            for line in merged[0]
            if not (line.startswith(AGAIN) and run_sections(line) <= measured)
        ]
        header = [line for i, line in enumerate(kept) if line or (i and kept[i - 1])]
        merged[0] = [*header, *(part for line in again for part in (line, ""))]
    for i, block in enumerate(merged):
        if key(block) == "## Goals and where this run stands" and key(block) in fresh:
            rows = {
                line.split("|")[1]: line
                for line in fresh.pop(key(block))
                if line.startswith("| ") and not line.startswith("| goal |")
            }
            merged[i] = [
                rows.pop(line.split("|")[1], line) if line.startswith("| ") else line
                for line in block
            ]
            # a goal the old report lacks goes after its last row
            last = max(n for n, line in enumerate(merged[i]) if line.startswith("|"))
            merged[i][last + 1 : last + 1] = list(rows.values())
        elif key(block) in fresh:
            merged[i] = fresh.pop(key(block))
    # A section the old report lacks goes before the note on how the baselines were run.
    at = next(
        (i for i, b in enumerate(merged) if key(b) == "## How the baselines were run"), len(merged)
    )
    merged[at:at] = [block for name, block in fresh.items() if name]
    return "\n".join("\n".join(b) for b in merged)


def cpu_split(throughput: dict[str, dict[int, dict]], clients: int) -> list[str]:
    """Report lines: where the CPU of one request goes at `clients` clients, and the
    throughput those costs allow on this machine's cores (the load generator included)."""
    rows = {name: r[clients].get("cpu_ms") for name, r in throughput.items()}
    if not all(rows.values()):
        return []
    cores = os.cpu_count() or 1
    one, two = rows["1 process"], rows["--workers 2"]
    generator = statistics.fmean([one["loadgen"], two["loadgen"]])
    single = one["main"] + one["children"]
    # One process uses one core at most; the load generator needs its share of the cores.
    single_ceiling = min(1000 / single, cores * 1000 / (single + generator))
    pair = two["main"] + two["children"]
    pair_ceiling = min(2 * 1000 / two["children"], cores * 1000 / (pair + generator))
    return [
        "",
        f"### Where the CPU goes at {clients} clients (CPU ms per request, /proc)",
        "",
        "| set-up | balancer (HAProxy + supervisor) | server processes (or the one) | "
        "load generator | ceiling on "
        f"{cores} cores, requests/s |",
        "|---|---|---|---|---|",
        f"| 1 process | none | {single:.3f} | {one['loadgen']:.3f} | {single_ceiling:.0f} |",
        f"| --workers 2 | {two['main']:.3f} | {two['children']:.3f} | {two['loadgen']:.3f} | "
        f"{pair_ceiling:.0f} |",
        "",
        f"The ceiling is what these CPU costs allow if nothing else ran: one process on one "
        f"core, two server processes on at most {cores} cores shared with HAProxy and the load "
        f"generator. Their ratio, **{pair_ceiling / single_ceiling:.2f}x**, bounds what "
        "`--workers 2` can gain over one process on this machine.",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cleanify", type=Path, help="the original server's checkout")
    parser.add_argument(
        "--before",
        type=Path,
        help="another checkout of this project (e.g. a `git worktree` at an older commit): "
        "section client also measures its server, the step memory off, beside ours",
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=SECTIONS,
        default=list(SECTIONS),
        help="measure these sections only and update just them (and their goal rows) in "
        "--out; default: all, rewriting the whole report",
    )
    args = parser.parse_args()
    only = set(args.only)
    repeats, episodes, runs = (5, 3, 1) if args.quick else (30, 15, 3)
    rounds, short = 3 * runs, max(1, episodes // 3)  # one-client rounds and their episodes
    sizes = SIZES[:3] if args.quick else SIZES
    steps_per_client = 20 if args.quick else 60
    load_before = os.getloadavg()

    engine_results = engine(repeats) if "engine" in only else {}
    scale_results = scaling(sizes) if "scaling" in only else {}
    memory = memory_per_episode(1000) if "memory" in only else 0.0
    memory_shared = memory_per_episode(1000, seeded=False) if "memory" in only else 0.0
    resets = {held: reset_cost(held) for held in STORE_SIZES} if "memory" in only else {}
    real = real_scale(max(3, repeats // 3)) if "real_scale" in only else {}

    baseline = args.cleanify is not None and (args.cleanify / "main.py").exists()
    # Servers compared with each other are measured in alternation, round after round, and
    # each keeps its best round: load from elsewhere on a shared machine then falls on all
    # of them alike instead of on whichever happened to run during it.
    makers: dict[str, Callable[[], Server]] = {
        "ours": ours,
        "ours, step memory off": lambda: ours(step_memory=False),
        "bare FastAPI": bare,
    }
    if baseline:
        makers["CleanifyAI"] = lambda: cleanify(args.cleanify)
    compared = args.before is not None and "client" in only
    started: dict[str, float] = {name: float("inf") for name in makers}
    cpu: dict[str, float] = {name: float("inf") for name in makers}
    for _ in tqdm(range(runs if "cold" in only else 0), desc="servers: cold start", **PROGRESS):
        for name, make in makers.items():
            with make() as server:
                started[name] = min(started[name], server.started)
                cpu[name] = min(cpu[name], server.cpu)
    rate: dict[str, float] = {}
    ws_rate = ws_echo = ws_transport = 0.0
    common: list[str] = []
    before_rate = 0.0
    if "client" in only:
        with contextlib.ExitStack() as stack:
            servers = {name: stack.enter_context(make()) for name, make in makers.items()}
            if compared:
                servers[BEFORE] = stack.enter_context(ours(step_memory=False, checkout=args.before))
            url, off_url = servers["ours"].url, servers["ours, step memory off"].url
            common = served_tasks(url)
            for other in ("CleanifyAI", BEFORE):
                if other in servers:
                    common = [t for t in common if t in served_tasks(servers[other].url)]
            measures: dict[str, Callable[[], float]] = {
                "ours, episode ids": lambda: drive(url, short, common, True),
                "ours, episode ids, a new instance every episode": lambda: drive(
                    url, short, common, True, fresh=True
                ),
                "ours, no ids (default episodes)": lambda: drive(url, short, common, False),
                # Every step computed: no episode takes over a step another one took.
                "ours, episode ids, step memory off": lambda: drive(off_url, short, common, True),
                "bare FastAPI endpoint": lambda: drive(
                    servers["bare FastAPI"].url, short, common, False
                ),
                "ours /ws": lambda: drive_ws(url, short, True),
                "bare /ws echo": lambda: drive_ws(servers["bare FastAPI"].url, short, False),
                # The same runs with the engine's own time (from /metrics) taken out.
                "ours, episode ids, engine time taken out": lambda: without_engine(
                    url, lambda: run_http(url, short, common, True)
                ),
                "ours, episode ids, step memory off, engine time taken out": lambda: without_engine(
                    off_url, lambda: run_http(off_url, short, common, True)
                ),
                "ours /ws, engine time taken out": lambda: without_engine(
                    url, lambda: run_ws(url, short, True)
                ),
            }
            if baseline:
                measures["CleanifyAI"] = lambda: drive(
                    servers["CleanifyAI"].url, short, common, False, checked=False
                )
            if compared:
                measures[BEFORE] = lambda: drive(servers[BEFORE].url, short, common, True)
            drive(url, 2, list(PLANS), True)  # warm-up: first-request paths, caches
            drive_ws(url, 1, True)
            for name, server in servers.items():
                if name != "ours":
                    drive(server.url, 1, common, False, checked=name != "CleanifyAI")
            best = dict.fromkeys(measures, 0.0)
            # Short rounds, many of them: the best one of each server is then likelier to be
            # one that no other work on the machine disturbed.
            for _ in tqdm(range(rounds), desc="servers: one client", **PROGRESS):
                for name, measure in measures.items():
                    best[name] = max(best[name], measure())
        ws_rate, ws_echo = best.pop("ours /ws"), best.pop("bare /ws echo")
        ws_transport = best.pop("ours /ws, engine time taken out")
        before_rate = best.pop(BEFORE, 0.0)
        rate = best
    # The two set-ups run side by side (idle when not measured), alternating per client count.
    throughput: dict[str, dict[int, dict]] = {"1 process": {}, "--workers 2": {}}
    clients_load = (os.getloadavg()[0], 0.0)
    if "clients" in only:
        with ours(1) as single, ours(2) as pair:
            setups = {"1 process": single, "--workers 2": pair}
            for server in setups.values():
                warm_openenv(server.url)
                load(server.url, 4, 10, PLANS)  # warm-up
            for _ in tqdm(range(runs), desc="servers: clients", **PROGRESS):
                for clients in CLIENTS:
                    for name, server in setups.items():
                        result = measured_load(server, clients, steps_per_client)
                        kept = throughput[name].get(clients)
                        if kept is None or result["rate"] > kept["rate"]:
                            throughput[name][clients] = result  # the least disturbed round
        clients_load = (clients_load[0], os.getloadavg()[0])
    trainer_results = trainers(256, 2 if args.quick else 4, runs) if "trainers" in only else None
    load_after = os.getloadavg()

    docs = args.out.parent
    if scale_results:
        plot_scaling(scale_results, docs / "step_cost.png")
    if "clients" in only:
        plot_throughput(throughput, docs / "throughput.png")

    command = (
        f"uv run python scripts/benchmark.py{' --cleanify ...' if baseline else ''}"
        f"{' --before ...' if compared else ''}"
        f"{' --quick' if args.quick else ''}"
    )
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    loads = f"{load_before[0]:.1f} at the start and {load_after[0]:.1f} at the end"
    partial = only != set(SECTIONS)
    lines = [
        "# Benchmarks",
        "",
        f"Produced by `{command}` on {when}.",
        "",
        f"Machine: {machine()}. Load average (1 min) {loads}: the machine is shared, so "
        "absolute numbers move by tens of percent between runs. Servers that are compared run "
        f"side by side and are measured in alternation, {runs} rounds, each keeping its best "
        "round (the least disturbed), so the ratios move less than the absolute numbers.",
        "",
    ]
    if partial:  # merged into the last full run's report, under its header
        lines = [
            "# Benchmarks",
            "",
            f"{AGAIN}`{command} --only {' '.join(s for s in SECTIONS if s in only)}` on {when} "
            f"({machine()}; load average {loads}): those sections and their goal rows.",
            "",
        ]
    lines += [
        "## Goals and where this run stands",
        "",
        "| goal | target | this run |",
        "|---|---|---|",
    ]
    if baseline and rate:
        lines.append(client_goal_row(rate))
    if baseline and "cold" in only:
        cold = started["ours"] / started["CleanifyAI"]
        cold_cpu = cpu["ours"] / cpu["CleanifyAI"]
        lines.append(
            f"| time to first /health vs CleanifyAI | ≤ 3x | **{cold:.1f}x** "
            f"({cold_cpu:.1f}x in CPU time) |"
        )
    if rate:
        lines.append(
            f"| one /ws session vs bare FastAPI echo | ≥ 60% | **{100 * ws_rate / ws_echo:.0f}%** "
            f"({100 * ws_transport / ws_echo:.0f}% with our engine's time taken out) |"
        )
    if engine_results:
        fixed = ", ".join(f"{engine_results[t]['median_us']:.0f}" for t in PLANS)
        again = ", ".join(f"{engine_results[t]['again_median_us']:.0f}" for t in PLANS)
        lines.append(
            f"| engine median per step, original tasks | < 300 µs | {fixed} µs (steps "
            f"computed); {again} µs (steps another episode took before) |"
        )
    if 100_000 in scale_results:
        lines.append(goal_row(scale_results[100_000]))
    if "clients" in only:
        one, two = throughput["1 process"][64], throughput["--workers 2"][64]
        lines += [
            f"| 64 clients, `--workers 2` vs 1 process | ~2x | **{two['rate'] / one['rate']:.2f}x** "
            f"({two['rate']:.0f} vs {one['rate']:.0f} requests/s) |",
            f"| p99 at 16 clients | < 100 ms | 1 process {throughput['1 process'][16]['p99_ms']:.0f} ms, "
            f"`--workers 2` {throughput['--workers 2'][16]['p99_ms']:.0f} ms |",
        ]
    if trainer_results:
        lines.append(trainer_load.goal_row(*trainer_results[:2]))
    if rate:
        lines += [
            "",
            "## One client, one request at a time (steps/s)",
            "",
            f"Reset and optimal-plan steps of the tasks every server serves ({', '.join(common)}), "
            "over one kept-alive connection (`http.client`): "
            f"{rounds} rounds of {short} episodes of each, in alternation, the best round kept.",
            "",
            "| server | steps/s |",
            "|---|---|",
        ]
        lines += [f"| {name} | {value:.0f} |" for name, value in rate.items()]
        lines += [
            f"| ours, OpenEnv /ws, one session (four tasks) | {ws_rate:.0f} |",
            f"| ours /ws, engine time taken out | {ws_transport:.0f} |",
            f"| bare FastAPI WebSocket echo, same frames | {ws_echo:.0f} |",
            "",
            '"Engine time taken out": the same run\'s seconds minus the engine time our '
            "server reports on /metrics (`dce_engine_seconds_sum`, the work inside "
            "`Episode.step` and reset), i.e. the rate the transport alone (client, uvicorn, "
            "framework, our routes and guards) would allow.",
        ]
    if before_rate:
        after = (revision(ROOT), rate["ours, episode ids, step memory off"])
        before = (revision(args.before), before_rate)
        lines += ["", *before_after_section(before, after, rate.get("CleanifyAI"))]
    if "cold" in only:
        lines += [
            "",
            f"## Time from launch to the first /health (best of {runs} rounds, seconds)",
            "",
            "| server | seconds | CPU seconds |",
            "|---|---|---|",
        ]
        lines += [f"| {name} | {value:.2f} | {cpu[name]:.2f} |" for name, value in started.items()]
        lines += [
            "",
            "CPU seconds: user and system time the server process had used when /health first "
            "answered (all its threads: ours also starts mounting OpenEnv's routes and opening "
            "the leaderboard in threads right after start-up).",
        ]
    if engine_results:
        lines += [
            "",
            "## Engine time per step (inside `Episode.step`, optimal plan, warm)",
            "",
            "Every episode a new instance of its task (a copy of the task: its own opening, "
            "no step taken over from another episode), so every step is computed; the last "
            "column is the same plan on one shared instance, whose steps earlier episodes "
            "already took (`dataclean_env/engine/step_memory.py`), as in a GRPO group.",
            "",
            *engine_lines(engine_results),
        ]
    if scale_results:
        lines += ["", *size_section(scale_results)]
    if "clients" in only:
        lines += [
            "",
            "## Throughput and latency against concurrent clients (REST)",
            "",
            f"Each client (`scripts/loadgen.py`, asyncio on this same machine) plays its own "
            f"episodes by id, {steps_per_client} steps, and checks every answer names its episode; "
            f"the two set-ups alternate, {runs} rounds, and each row is its best round. "
            f"Load average (1 min) {clients_load[0]:.1f} when this section began and "
            f"{clients_load[1]:.1f} when it ended: the CPU per request below moves much less "
            "with other work on the machine than requests/s do.",
            "",
            "| server | clients | requests/s | p50 ms | p99 ms | errors | cross-talk |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, by_clients in throughput.items():
            for c, r in by_clients.items():
                lines.append(
                    f"| {name} | {c} | {r['rate']:.0f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
                    f"{r['errors']} | {r['crossed']} |"
                )
        lines += ["", "![throughput](throughput.png)", *cpu_split(throughput, 64)]
    if trainer_results:
        lines += ["", *trainer_load.section(*trainer_results)]
    if "memory" in only:
        lines += [
            "",
            "## Memory",
            "",
            f"Python heap per live episode (tracemalloc, 1000 episodes over the four tasks): "
            f"**{memory / 1024:.1f} KiB** when each is a new instance (a seed of its own), "
            f"**{memory_shared / 1024:.1f} KiB** when they are of one instance per task and "
            "share its opening.",
            "",
            "A reset by id in the episode store (`EpisodeStore.reset`, median of 5 runs of 200) "
            "as the store holds more episodes: "
            + ", ".join(f"{resets[held]:.0f} µs with {held:,} held" for held in STORE_SIZES)
            + " (no step of it looks at every episode held).",
        ]
    if real:
        lines += ["", *real_scale_section(real)]
    lines += [
        "",
        "## How the baselines were run",
        "",
        "CleanifyAI is the public repository ReverseCoder1/CleanifyAI (its `main.py`, "
        "`environment.py`, `models.py` and `datasets/`), copied outside this repository and "
        "run from its own folder with its own virtual environment holding its pinned "
        "dependencies (`fastapi==0.104.1 uvicorn==0.24.0 pydantic==2.5.0 pandas==2.1.3 "
        "numpy==1.26.2`; plain uvicorn, so asyncio and h11): `.venv/bin/python -m uvicorn "
        "main:app --port N`. Nothing of it is part of this repository. To rebuild it: put "
        "those files in a folder, `python -m venv .venv && .venv/bin/pip install` the "
        "versions above, and pass the folder as `--cleanify`. The copy measured since "
        "2026-12-07 holds `main.py` at commit a706bc3, `environment.py` at fd9ba59, "
        "`models.py` at 5f45585, `datasets/task_metadata.json` at 4a18208 and the dirty and "
        "gold CSVs of easy at 9764057 and 08661cf, medium at 06af427 and 4049092, hard at "
        "1d3fd5b and d0a2bc8; it serves easy_dedup_rename, medium_missing_dtype and "
        "hard_full_pipeline, so the one-client rounds drive those three tasks on every "
        "server. It serves one shared episode "
        "per task, so it is driven without episode ids, as its clients call it; our server "
        "is measured both ways. The bare endpoint is `scripts/bare_app.py` on our own stack "
        "(uvloop, httptools): it parses the JSON body and answers a fixed object. "
        "`--before PATH` serves another checkout of this project (`git worktree add PATH "
        "<commit>`) from its own folder, with its `.venv` if it has one, else this one's, "
        "the step memory off, beside ours in the one-client rounds: the before/after table.",
        "",
    ]
    text = "\n".join(lines)
    old = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
    if partial and old:
        text = merge_report(old, text)
    elif "<!-- real-tables:begin -->" in old:  # scripts/benchmark_real_tables.py's section
        text += "\n" + old[old.index("<!-- real-tables:begin -->") :]
    args.out.write_text(text, encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
