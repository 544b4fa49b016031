"""`scripts/benchmark.py --only scaling` replaces its own section and goal row of
docs/BENCHMARKS.md and leaves every other line as the last full run wrote it."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import benchmark  # noqa: E402

BEFORE = """# Benchmarks

## Goals and where this run stands

| goal | target | this run |
|---|---|---|
| 100,000-row step | < 250 ms | median 2639 ms, slowest 3424 ms |
| p99 at 16 clients | < 100 ms | kept |

## Step cost against table size

| rows | cells | median ms | slowest ms | reset ms | µs per cell |
| 100 | 800 | 0.8 | 13.4 | 0.7 | 0.96 |

![step cost](step_cost.png)

## Throughput and latency against concurrent clients (REST)

kept as it was
"""

RESULT = {"cells": 800, "median_ms": 0.5, "median_cpu_ms": 0.4, "max_ms": 2.0}
RESULT |= {"reset_ms": 0.6, "us_per_cell": 0.62}


def run_of_sizes(sizes: dict[int, dict[str, float]]) -> str:
    goals = ["## Goals and where this run stands", "", "| goal | target | this run |"]
    goals += ["|---|---|---|"] + ([benchmark.goal_row(sizes[100_000])] if 100_000 in sizes else [])
    return "\n".join(["# Benchmarks", "", *goals, "", *benchmark.size_section(sizes), ""])


def test_the_size_section_alone_replaces_its_section() -> None:
    text = benchmark.merge_report(BEFORE, run_of_sizes({100: RESULT}))
    lines = text.split("\n")
    assert "| p99 at 16 clients | < 100 ms | kept |" in lines
    assert text.count("## Step cost against table size") == 1
    assert "| 100 | 800 | 0.8 | 13.4 |" not in text  # the old row is gone
    assert "| 100 | 800 | 0.5 | 0.4 | 2.0 | 0.6 | 0.62 |" in lines  # seven columns
    assert "median 2639 ms" in text  # no 100,000-row run: the goal row is left alone
    assert text.endswith(
        "## Throughput and latency against concurrent clients (REST)\n\nkept as it was\n"
    )


def test_a_100k_run_replaces_its_goal_row() -> None:
    big = RESULT | {"median_ms": 125.3, "max_ms": 200.8}
    text = benchmark.merge_report(BEFORE, run_of_sizes({100_000: big}))
    assert "| 100,000-row step | < 250 ms | median 125 ms, slowest 201 ms |" in text
    assert "median 2639 ms" not in text and "| p99 at 16 clients | < 100 ms | kept |" in text


def test_a_goal_the_old_report_lacks_is_added_after_its_rows() -> None:
    goals = [
        "## Goals and where this run stands",
        "",
        "| goal | target | this run |",
        "|---|---|---|",
    ]
    new = "\n".join(["# Benchmarks", "", *goals, "| a new goal | ≥ 50% | **44%** |", ""])
    lines = benchmark.merge_report(BEFORE, new).split("\n")
    at = lines.index("| a new goal | ≥ 50% | **44%** |")
    assert lines[at - 1] == "| p99 at 16 clients | < 100 ms | kept |" and lines[at + 1] == ""


def test_a_run_of_some_sections_is_named_in_the_header() -> None:
    """The header keeps the full run's date and machine, and names the later runs of some
    sections; a run of the same sections replaces the line of the one before."""
    full = "Produced by `uv run python scripts/benchmark.py` on 2026-11-30.\n\nMachine: A.\n"
    old = BEFORE.replace("# Benchmarks\n", f"# Benchmarks\n\n{full}", 1)
    again = benchmark.AGAIN + "`uv run python scripts/benchmark.py --only scaling` on {} (B)."

    def partial(when: str) -> str:
        run = run_of_sizes({100: RESULT})
        return run.replace("# Benchmarks\n", f"# Benchmarks\n\n{again.format(when)}\n", 1)

    first = benchmark.merge_report(old, partial("2026-12-01"))
    second = benchmark.merge_report(first, partial("2026-12-02"))
    header = f"# Benchmarks\n\n{full}\n{again.format('2026-12-02')}\n\n"
    assert second.split("## Goals")[0] == header
    assert first.split("## Goals")[0] == header.replace("12-02", "12-01")


def test_a_run_replaces_the_lines_of_earlier_runs_its_sections_cover() -> None:
    """Whatever its other options (`--cleanify`, `--before`), a later run of the same
    sections, or of more, rewrote everything an earlier run's line names: that line goes. A
    run of sections the later one did not measure keeps its line."""
    line = benchmark.AGAIN + "`uv run python scripts/benchmark.py{} --only {}` on {} (B)."
    client = line.format(" --cleanify ...", "client", "2026-12-05")
    both = line.format("", "cold client", "2026-12-05")
    trainers = line.format("", "trainers", "2026-12-06")
    older = line.format(" --before ...", "client", "2026-12-06")
    header = f"# Benchmarks\n\nProduced by a full run.\n\n{client}\n\n{both}\n\n{trainers}\n\n"
    old = BEFORE.replace("# Benchmarks\n", header + older + "\n", 1)
    latest = line.format(" --cleanify ... --before ...", "client", "2026-12-07")
    new = run_of_sizes({}).replace("# Benchmarks\n", f"# Benchmarks\n\n{latest}\n", 1)
    merged = benchmark.merge_report(old, new)
    kept = f"# Benchmarks\n\nProduced by a full run.\n\n{both}\n\n{trainers}\n\n{latest}\n\n"
    assert merged.split("## Goals")[0] == kept


REAL = {"rows": 50_000, "cells": 400_000, "wrong": 140_000, "budget": 150, "plan_steps": 89}
REAL |= {"set_cells_steps": 87, "f1": 1.0, "load": (12_000.0, 11_000.0)}
REAL |= {"first_reset": (650.0, 600.0), "reset": (0.1, 0.1), "set_cells": (170.0, 160.4)}
REAL |= {"set_cells_max": (400.0, 200.0), "noop_set_cells": (30.0, 7.0)}
REAL |= {"show_rows": (1.0, 1.0), "graded_touched": (2.0, 2.0), "graded_whole": (90.0, 90.0)}
REAL |= {"memory_reset_mib": 0.5, "memory_end_mib": 60.0}


def test_a_section_the_old_report_lacks_goes_before_the_note_on_the_baselines() -> None:
    """`--only real_scale` on a report written before that section existed adds it."""
    old = BEFORE + "\n## How the baselines were run\n\nkept\n"
    goals = [
        "## Goals and where this run stands",
        "",
        "| goal | target | this run |",
        "|---|---|---|",
    ]
    run = ["# Benchmarks", "", *goals, "", *benchmark.real_scale_section(REAL), ""]
    text = benchmark.merge_report(old, "\n".join(run))
    headings = [line for line in text.split("\n") if line.startswith("## ")]
    assert headings[-2:] == ["## A 50,000-row real table", "## How the baselines were run"]
    assert "| `set_cells` step, 1,000 cells | 170 | 160 |" in text
    assert "| no-op `set_cells` (a cell set to what it holds) | 30.0 | 7.0 |" in text
    assert "| later reset (the opening shared) | 0.100 | 0.100 |" in text
    assert "kept as it was" in text and text.endswith("kept\n")
