"""Where engine time goes: cProfile of `Episode.step` on the original tasks and on a large
table; prints a markdown section (top functions by own time, grouped by module).

    uv run python scripts/profile_engine.py --write   # docs/PROFILE.md, every section
    uv run python scripts/profile_engine.py --rows 20000
    uv run python scripts/profile_engine.py --rows 0 --by-operation   # small tables only

Every episode is on an unshared copy of its task, so every step is computed (none is taken
over from an earlier episode).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from benchmark import PLANS, machine, tiled_task, unshared  # noqa: E402

from dataclean_env.engine.episode import Episode  # noqa: E402
from dataclean_env.schemas import Action  # noqa: E402
from dataclean_env.tasks import default_registry  # noqa: E402
from dataclean_env.tasks.custom import CustomFamily  # noqa: E402


def area(filename: str) -> str:
    """A coarse owner for a function: our module, or the library it lives in."""
    if "dataclean_env" in filename:
        return "dataclean_env/" + filename.split("dataclean_env/", 1)[1]
    for library in ("pandas", "numpy", "pydantic", "re", "dataclasses"):
        if f"/{library}/" in filename or filename.endswith(f"/{library}.py"):
            return library
    return "other (builtins, stdlib)"


def report(profile: cProfile.Profile, title: str, steps: int, top: int) -> list[str]:
    stats = pstats.Stats(profile)
    total = sum(row[2] for row in stats.stats.values())  # own time of every function
    by_area: dict[str, float] = defaultdict(float)
    for (filename, _, _), row in stats.stats.items():
        by_area[area(filename)] += row[2]
    lines = [
        f"## {title}",
        "",
        f"{steps} steps profiled, {total * 1e6 / steps:.0f} µs own time per step (cProfile "
        "slows Python code more than C code; read the shares, not the absolute times).",
        "",
        "| where | share of own time |",
        "|---|---|",
    ]
    for name, seconds in sorted(by_area.items(), key=lambda kv: -kv[1])[:10]:
        lines.append(f"| {name} | {100 * seconds / total:.0f}% |")
    lines += ["", "| function | calls per step | own µs per step |", "|---|---|---|"]
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]
    for (filename, line, name), row in rows:
        lines.append(
            f"| `{name}` ({area(filename)}:{line}) | {row[1] / steps:.1f} | {row[2] * 1e6 / steps:.1f} |"
        )
    return [*lines, ""]


def profile_fixed(episodes: int) -> tuple[cProfile.Profile, int]:
    registry = default_registry()
    profile = cProfile.Profile()
    steps = 0
    for _ in range(episodes):
        for task_id, plan in PLANS.items():
            episode = Episode("profile", unshared(registry.make(task_id, None)))
            for action in [Action(**a) for a in plan]:
                profile.enable()
                episode.step(action)
                profile.disable()
                steps += 1
    return profile, steps


def by_operation(episodes: int) -> list[str]:
    """Wall and CPU time of each operation of the original tasks' plans (no profiler): a
    step whose wall time far exceeds its CPU time waited for the CPU (another process ran)."""
    registry = default_registry()
    wall: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    for _ in range(episodes):
        for task_id, plan in PLANS.items():
            episode = Episode("profile", unshared(registry.make(task_id, None)))
            for action in [Action(**a) for a in plan]:
                start, start_cpu = time.perf_counter(), time.thread_time()
                episode.step(action)
                wall[action.operation].append(1e6 * (time.perf_counter() - start))
                cpu[action.operation].append(1e6 * (time.thread_time() - start_cpu))
    lines = [
        "## Time per operation, the four original tasks (wall and CPU µs)",
        "",
        "| operation | steps | median wall | p95 wall | median CPU | p95 CPU |",
        "|---|---|---|---|---|---|",
    ]
    for name, times in sorted(wall.items(), key=lambda kv: -statistics.median(kv[1])):
        p95 = statistics.quantiles(times, n=20)[18]
        cpu_p95 = statistics.quantiles(cpu[name], n=20)[18]
        lines.append(
            f"| {name} | {len(times)} | {statistics.median(times):.0f} | {p95:.0f} | "
            f"{statistics.median(cpu[name]):.0f} | {cpu_p95:.0f} |"
        )
    return [*lines, ""]


def profile_rows(rows: int) -> tuple[cProfile.Profile, int]:
    profile = cProfile.Profile()
    steps = 0
    with tempfile.TemporaryDirectory() as scratch:
        task_dir = tiled_task(Path(scratch), rows)
        episode = Episode("profile", CustomFamily([Path(scratch)]).make(task_dir.name, None))
        for action in [Action(**a) for a in PLANS["hard_full_pipeline"]]:
            profile.enable()
            episode.step(action)
            profile.disable()
            steps += 1
    return profile, steps


PROFILE = ROOT / "docs" / "PROFILE.md"
COMMAND = "uv run python scripts/profile_engine.py --write"


def header(episodes: int, rows: int) -> list[str]:
    """The page's title and how it was made (`--write`)."""
    load = os.getloadavg()[0]
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return [
        "# Engine profiles",
        "",
        f"Produced by `{COMMAND}` on {when}. Machine: {machine()}; load average (1 min) "
        f"{load:.1f} at the start.",
        "",
        f"cProfile of `Episode.step` alone: {episodes} rounds of the original tasks' reference "
        "plans, each episode on a new copy of its task (every step computed), then the hard "
        f"task's plan on its table tiled to {rows:,} rows. The time per operation is measured "
        "without the profiler. What would remove the time: [DESIGN.md](DESIGN.md#performance); "
        "the rates it gives: [BENCHMARKS.md](BENCHMARKS.md).",
        "",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--by-operation", action="store_true", help="also time each operation, unprofiled"
    )
    parser.add_argument(
        "--write", action="store_true", help=f"every section, written to {PROFILE.name}"
    )
    args = parser.parse_args()
    if args.write:
        args.by_operation, args.rows = True, args.rows or 20_000
    lines = header(args.episodes, args.rows) if args.write else []
    profile, steps = profile_fixed(args.episodes)
    lines += report(profile, "The four original tasks (20-60 rows)", steps, args.top)
    if args.by_operation:
        lines += by_operation(args.episodes)
    if args.rows:  # --rows 0: the small tables only
        profile, steps = profile_rows(args.rows)
        lines += report(profile, f"The hard task tiled to {args.rows:,} rows", steps, args.top)
    text = "\n".join(lines)
    if args.write:
        PROFILE.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
