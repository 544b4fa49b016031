"""`query` and `sql` step latency beside the built-in operation that does the same, in one run.

    uv run python scripts/benchmark_sql.py               # writes its section of docs/BENCHMARKS.md
    uv run python scripts/benchmark_sql.py --rows 1000 --repeats 3 --print-only

The table is generated here (an id, a name, a city with stray spaces, a quantity, a price),
dirty and clean, and loaded through the custom-task loader like any brought table. Each pair
of steps runs on fresh episodes in alternation, so load from elsewhere on the machine falls
on both alike. A second table splits a `sql` step into the sandbox's parts. A SQL step's
DuckDB work runs in a sandbox worker process, so CPU is this process's plus that worker's.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from benchmark_real_tables import write_section as write_marked  # noqa: E402

from dataclean_env.engine.episode import Episode  # noqa: E402
from dataclean_env.operations.sql import in_sandbox, sandbox_pool  # noqa: E402
from dataclean_env.sandbox import sql_jobs  # noqa: E402
from dataclean_env.schemas import Action  # noqa: E402
from dataclean_env.table.limits import EngineLimits  # noqa: E402
from dataclean_env.tasks.custom import load_custom_task  # noqa: E402
from dataclean_env.tasks.registry import Task  # noqa: E402

BEGIN, END = "<!-- sql-bench:begin -->", "<!-- sql-bench:end -->"
# Latency is measured, not the limits: a slow shared machine must not time a step out.
LIMITS = EngineLimits(step_seconds=600, max_table_chars=10**9)
CITIES = ["Boston", "New York", "Chicago", "Denver", "Austin"]


def generated(rows: int, folder: Path) -> Path:
    """A dirty/clean pair of `rows` rows: city padded with spaces in a third of the rows."""
    rng = random.Random(rows)
    folder.mkdir(parents=True, exist_ok=True)
    city = [rng.choice(CITIES) for _ in range(rows)]
    clean = pd.DataFrame(
        {
            "id": range(1, rows + 1),
            "name": [f"customer {rng.randrange(10**6)}" for _ in range(rows)],
            "city": city,
            "qty": [rng.randrange(1, 100) for _ in range(rows)],
            "price": [round(rng.uniform(1, 500), 2) for _ in range(rows)],
        }
    )
    dirty = clean.copy()
    dirty["city"] = [f"  {c} " if i % 3 == 0 else c for i, c in enumerate(city)]
    dirty.to_csv(folder / "dirty.csv", index=False)
    clean.to_csv(folder / "clean.csv", index=False)
    types = '{"qty": "int", "price": "float"}'
    (folder / "task.json").write_text(
        f'{{"key": "id", "max_steps": 1000, "types": {types}}}', encoding="utf-8"
    )
    return folder


def action(operation: str, **parameters: object) -> dict:
    return {"operation": operation, "parameters": parameters}


# Each row of the report: a built-in step and the SQL step that does the same work.
PAIRS: dict[str, tuple[dict, dict]] = {
    "trim one text column": (
        action("strip", column="city"),
        action("sql", sql="UPDATE t SET city = trim(city)"),
    ),
    "change one cell": (
        action("set_cell", row_id=7, column="qty", value=42),
        action("sql", sql="UPDATE t SET qty = 42 WHERE id = 7"),
    ),
    "drop five rows": (
        action("drop_rows", row_ids=[2, 4, 6, 8, 10]),
        action("sql", sql="DELETE FROM t WHERE id IN (2, 4, 6, 8, 10)"),
    ),
    "look at the table": (
        action("show_rows", offset=0, limit=50),
        action("query", sql="SELECT city, count(*) AS n FROM t GROUP BY city ORDER BY city"),
    ),
}

# The sandbox's parts, each including the ones before it.
PARTS = (
    "open a locked-down connection",
    "open it and copy the table in",
    "... and run the UPDATE",
    "... and read every column back",
    "... all of it in a sandbox worker (the table sent there, the rows back)",
)

Timing = tuple[float, float]  # ms: median wall, median CPU of this process and its worker


@functools.cache
def _worker_pid() -> int:
    """The sandbox worker that runs this script's SQL (one at a time: always the same one)."""
    return sandbox_pool().run(os.getpid, seconds=60)


def cpu_seconds() -> float:
    """CPU time of this process and of its sandbox worker (nanoseconds in /proc/*/schedstat)."""
    try:
        with open(f"/proc/{_worker_pid()}/schedstat", encoding="ascii") as stat:
            return time.process_time() + int(stat.read().split()[0]) / 1e9
    except FileNotFoundError:
        raise RuntimeError("the sandbox worker was replaced during the measurements") from None


def step_times(task: Task, raw: dict, repeats: int) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of one step on each of `repeats` fresh episodes (after a warm-up)."""
    times = []
    for i in range(repeats + 1):
        episode = Episode(f"bench-{i}", Task(task.spec, task.dirty.copy(), task.grader), LIMITS)
        wall, cpu = time.perf_counter(), cpu_seconds()
        episode.step(Action(**raw))
        if i:
            times.append((time.perf_counter() - wall, cpu_seconds() - cpu))
    return times


def median_ms(times: list[tuple[float, float]]) -> Timing:
    return (
        statistics.median(t[0] for t in times) * 1000,
        statistics.median(t[1] for t in times) * 1000,
    )


def measure(rows: int, repeats: int, work: Path) -> dict[str, tuple[Timing, Timing]]:
    spec, dirty, grader, _ = load_custom_task(generated(rows, work / f"sql{rows}"))
    task = Task(spec, dirty, grader)
    result = {}
    for name, (builtin, sql) in PAIRS.items():
        pair: tuple[list, list] = ([], [])
        for _ in range(repeats):  # alternate, one step of each at a time
            pair[0].extend(step_times(task, builtin, 1))
            pair[1].extend(step_times(task, sql, 1))
        result[name] = (median_ms(pair[0]), median_ms(pair[1]))
    return result


def sandbox_parts(rows: int, repeats: int, work: Path) -> dict[str, float]:
    """Median CPU ms of the parts of a `sql` step's sandbox on `rows` rows."""
    dirty = load_custom_task(generated(rows, work / f"parts{rows}"))[1]
    statement = "UPDATE t SET city = trim(city)"
    runs: list[Callable[[], object]] = [
        lambda: sql_jobs.new_connection().close(),
        lambda: _filled(dirty).close(),
        lambda: _updated(dirty, statement).close(),
        lambda: _read_back(dirty, statement),
        lambda: in_sandbox(
            sql_jobs.run_statements, dirty, [statement], list(dirty.columns), None, deadline=None
        ),
    ]
    parts = dict(zip(PARTS, runs, strict=True))
    return {
        name: statistics.median(_timed(run) for _ in range(repeats)) * 1000
        for name, run in parts.items()
    }


def _timed(run: Callable[[], object]) -> float:
    """CPU seconds `run()` takes (wall time on a shared machine is noise)."""
    start = cpu_seconds()
    run()
    return cpu_seconds() - start


def _filled(table: pd.DataFrame) -> duckdb.DuckDBPyConnection:
    connection = sql_jobs.new_connection()
    sql_jobs.load_table(connection, table)
    return connection


def _updated(table: pd.DataFrame, statement: str) -> duckdb.DuckDBPyConnection:
    connection = _filled(table)
    connection.execute(statement)
    return connection


def _read_back(table: pd.DataFrame, statement: str) -> None:
    connection = _updated(table, statement)
    names = ", ".join(f'"{c}"' for c in table.columns)
    connection.execute(f"SELECT rowid, {names} FROM t ORDER BY rowid").fetchall()
    connection.close()


def section(
    results: dict[int, dict[str, tuple[Timing, Timing]]],
    parts: dict[str, float],
    parts_rows: int,
    repeats: int,
) -> list[str]:
    sizes = sorted(results)
    lines = [
        BEGIN,
        "## SQL steps beside the built-in operations",
        "",
        f"Produced by `uv run python scripts/benchmark_sql.py` on {time.strftime('%Y-%m-%d')}: "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f} when it ran. A generated table (5 columns: id, "
        "name, city, qty, price) loaded as a brought table; milliseconds inside `Episode.step` "
        f"(operation, snapshot, grading, observation), median of {repeats} fresh episodes, "
        "wall / CPU of this process and its sandbox worker. Each pair ran in alternation in "
        "this one run.",
        "",
        "| work | built-in step | SQL step | "
        + " | ".join(f"built-in, {s:,} rows | SQL, {s:,} rows" for s in sizes)
        + " |",
        "|---|---|---|" + "---:|---:|" * len(sizes),
    ]
    for name, (builtin, sql) in PAIRS.items():
        shown = " | ".join(
            "{:.1f} / {:.1f} | {:.1f} / {:.1f}".format(*results[s][name][0], *results[s][name][1])
            for s in sizes
        )
        lines.append(f"| {name} | `{_shown(builtin)}` | `{_shown(sql)}` | {shown} |")
    lines += [
        "",
        f"Where a `sql` step's sandbox time goes on {parts_rows:,} rows (median CPU ms of this "
        "process and its sandbox worker, each line includes the ones above it; all but the "
        "last run here, in this process):",
        "",
        "| part | ms |",
        "|---|---:|",
        *(f"| {name} | {ms:.1f} |" for name, ms in parts.items()),
        "",
        "A SQL step pays for a fresh locked-down DuckDB connection, copying the table into it "
        "and reading every column back, and for sending the table to its sandbox worker and "
        "the rows back; a built-in step touches only what it changes. On "
        "large tables the copy and the read-back grow with the cells, so prefer a built-in "
        "operation where one does the job, and SQL for questions and repairs no single "
        "operation expresses.",
        END,
    ]
    return lines


def _shown(raw: dict) -> str:
    params = raw["parameters"]
    if "sql" in params:
        return f"{raw['operation']} {params['sql']}"
    return raw["operation"] + " " + ", ".join(f"{k}={v}" for k, v in params.items())


def write_section(path: Path, lines: list[str]) -> None:
    """Replace this script's section of `path` (or append it), leaving the rest alone."""
    write_marked(path, lines, BEGIN, END)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", default="1000,100000")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    parser.add_argument("--print-only", action="store_true")
    args = parser.parse_args()
    sizes = [int(n) for n in args.rows.split(",")]
    with tempfile.TemporaryDirectory() as work:
        results = {rows: measure(rows, args.repeats, Path(work)) for rows in sizes}
        parts = sandbox_parts(sizes[0], args.repeats * 3, Path(work))
    lines = section(results, parts, sizes[0], args.repeats)
    print("\n".join(lines))
    if not args.print_only:
        write_section(args.out, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
