"""Engine time per step on real tables, and how it grows with the number of cells.

    uv run python scripts/benchmark_real_tables.py            # writes its section of docs/BENCHMARKS.md
    uv run python scripts/benchmark_real_tables.py --rows 1000,10000 --repeats 5 --print-only

The table is `datasets/rayyan` (11 columns) repeated to each size with fresh ids, loaded
through the custom-task loader like any folder. Engine time is the time inside
`Episode.step` (operation, snapshot, cell-repair grading, observation), median over fresh
episodes; "grading, cold" is `CellRepairGrader.counts` on a table it has not seen (no cached
column), the worst case of a step that changes every column.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dataclean_env.engine.episode import Episode  # noqa: E402
from dataclean_env.schemas import Action  # noqa: E402
from dataclean_env.table.limits import EngineLimits  # noqa: E402
from dataclean_env.table.snapshot import Snapshot  # noqa: E402
from dataclean_env.tasks.custom import load_custom_task  # noqa: E402
from dataclean_env.tasks.registry import Task  # noqa: E402

BEGIN, END = "<!-- real-tables:begin -->", "<!-- real-tables:end -->"
# Engine time is measured, not the limits: past 1,000 rows rayyan holds more than the
# default 500,000 characters of text, and the text budget would then refuse any step that
# adds a character (set_cell, fill_missing); a slow shared machine must not time a step out.
LIMITS = EngineLimits(step_seconds=600, max_table_chars=10**9)
RAYYAN = ROOT / "datasets" / "rayyan"


def tiled(rows: int, folder: Path) -> Path:
    """rayyan's dirty/clean pair repeated to `rows` rows, ids kept unique."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("dirty.csv", "clean.csv"):
        table = pd.read_csv(RAYYAN / name, dtype=str, keep_default_na=False)
        copies = -(-rows // len(table))
        big = pd.concat([table] * copies, ignore_index=True).iloc[:rows].copy()
        big["id"] = [str(i + 1) for i in range(rows)]
        big.to_csv(folder / name, index=False)
    (folder / "task.json").write_text('{"key": "id", "max_steps": 1000}', encoding="utf-8")
    return folder


def actions(ids: list[int]) -> dict[str, dict]:
    return {
        "set_cell (1 cell)": {
            "operation": "set_cell",
            "parameters": {"row_id": ids[1], "column": "article_jissue", "value": "-1"},
        },
        "fill_missing constant (1 column)": {
            "operation": "fill_missing",
            "parameters": {"strategy": "constant", "column": "article_jvolumn", "value": "-1"},
        },
        "replace (1 column)": {
            "operation": "replace",
            "parameters": {"column": "article_language", "old_value": "ENG", "new_value": "eng"},
        },
        "strip (every column)": {"operation": "strip", "parameters": {}},
        "drop_rows (5 rows: every column realigned)": {
            "operation": "drop_rows",
            "parameters": {"row_ids": ids[:5]},
        },
        "show_rows (table unchanged)": {
            "operation": "show_rows",
            "parameters": {"offset": 0, "limit": 50},
        },
    }


Timing = tuple[float, float, float]  # ms: best wall, median wall, best CPU (this process)


def measure(rows: int, repeats: int, work: Path) -> dict[str, Timing]:
    spec, dirty, grader, _ = load_custom_task(tiled(rows, work / f"t{rows}"))
    ids = dirty["id"].tolist()
    times: dict[str, list[float]] = {}
    cpu_times: dict[str, list[float]] = {}
    for name, action in actions(ids).items():
        for i in range(repeats + 1):
            episode = Episode(f"bench-{i}", Task(spec, dirty.copy(), grader), LIMITS)
            start, cpu = time.perf_counter(), time.process_time()
            episode.step(Action(**action))
            if i:  # the first is a warm-up
                times.setdefault(name, []).append(time.perf_counter() - start)
                cpu_times.setdefault(name, []).append(time.process_time() - cpu)
    cold, cold_cpu = [], []
    for _ in range(repeats):
        snapshot = Snapshot.of(dirty.copy())  # new lists: nothing cached for them
        start, cpu = time.perf_counter(), time.process_time()
        grader.counts(snapshot)
        cold.append(time.perf_counter() - start)
        cold_cpu.append(time.process_time() - cpu)
    times["grading, cold (every column)"] = cold
    cpu_times["grading, cold (every column)"] = cold_cpu
    starts, start_cpu = [], []
    for i in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        Episode(f"reset-{i}", Task(spec, dirty.copy(), grader), LIMITS)
        starts.append(time.perf_counter() - start)
        start_cpu.append(time.process_time() - cpu)
    times["reset"] = starts
    cpu_times["reset"] = start_cpu
    return {
        name: (
            min(values) * 1000,
            statistics.median(values) * 1000,
            min(cpu_times[name]) * 1000,
        )
        for name, values in times.items()
    }


def section(results: dict[int, dict[str, Timing]], repeats: int) -> list[str]:
    sizes = sorted(results)
    cells = [size * 11 for size in sizes]
    names = list(results[sizes[0]])
    lines = [
        BEGIN,
        "## Real tables: engine time per step by table size",
        "",
        f"Produced by `uv run python scripts/benchmark_real_tables.py` on "
        f"{time.strftime('%Y-%m-%d')}: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}. `datasets/rayyan` (11 columns) repeated to each size; "
        f"milliseconds inside `Episode.step`, one step on each of {repeats} fresh episodes: "
        "best wall time (median wall time) / best CPU time of this process. The machine is "
        f"shared (load average {os.getloadavg()[0]:.1f} on 2 cores when this ran), so wall "
        "time includes waiting for a core; CPU time is what the step itself costs. The "
        "slope is a least-squares fit of the best CPU times against cells.",
        "",
        "| step (ms: wall best (median) / CPU best) | "
        + " | ".join(f"{s:,} rows ({c:,} cells)" for s, c in zip(sizes, cells, strict=True))
        + " | µs per 1,000 cells |",
        "|---|" + "---:|" * (len(sizes) + 1),
    ]
    for name in names:
        best = [results[s][name][2] for s in sizes]
        slope = np.polyfit(cells, best, 1)[0] * 1000 * 1000 if len(sizes) > 1 else float("nan")
        shown = " | ".join("{:.1f} ({:.1f}) / {:.1f}".format(*results[s][name]) for s in sizes)
        lines.append(f"| {name} | {shown} | {slope:.0f} |")
    lines += [
        "",
        "Cost grows linearly with cells. A step that changes one column regrades that column "
        "only: the grader caches each column's counts by the identity of its values and of "
        "the row alignment, and snapshots share the lists of unchanged columns. A step that "
        "changes every column, or moves rows, regrades every cell (the cold figure).",
        END,
    ]
    return lines


def write_section(path: Path, lines: list[str], begin: str = BEGIN, end: str = END) -> None:
    """Replace the section between `begin` and `end` of `path` (or append it), leaving the
    rest alone."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    block = "\n".join(lines)
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", default="1000,2500,5000,10000,20000")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    parser.add_argument("--print-only", action="store_true")
    args = parser.parse_args()
    sizes = [int(n) for n in args.rows.split(",")]
    with tempfile.TemporaryDirectory() as work:
        results = {rows: measure(rows, args.repeats, Path(work)) for rows in sizes}
    lines = section(results, args.repeats)
    print("\n".join(lines))
    if not args.print_only:
        write_section(args.out, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
