"""`scripts/benchmark_sql.py` writes its section of docs/BENCHMARKS.md between its markers;
the committed section holds a row for each pair of steps the script measures, at 1,000 and
100,000 rows, so a change to the pairs without a new run fails here. Nothing is timed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import benchmark_real_tables  # noqa: E402
import benchmark_sql  # noqa: E402

REPORT = ROOT / "docs" / "BENCHMARKS.md"
SIZES = (1_000, 100_000)


def _fake_results() -> dict[int, dict[str, tuple[tuple[float, float], tuple[float, float]]]]:
    return {s: {name: ((1.0, 0.5), (20.0, 19.5)) for name in benchmark_sql.PAIRS} for s in SIZES}


def _section(text: str) -> list[str]:
    begin, end = text.index(benchmark_sql.BEGIN), text.index(benchmark_sql.END)
    return text[begin:end].split("\n")


def _rows(lines: list[str], first_cell: str) -> list[list[str]]:
    """The body rows of the table whose header starts with `first_cell`, split in cells."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_cell} |"))
    body = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        body.append([cell.strip() for cell in line.strip("|").split("|")])
    return body


def _check(lines: list[str]) -> None:
    assert lines[1] == "## SQL steps beside the built-in operations"
    header = _rows(lines, "work")
    assert [row[0] for row in header] == list(benchmark_sql.PAIRS)
    for row in header:
        builtin, sql = benchmark_sql.PAIRS[row[0]]
        assert row[1] == f"`{benchmark_sql._shown(builtin)}`"
        assert row[2] == f"`{benchmark_sql._shown(sql)}`"
        assert len(row) == 3 + 2 * len(SIZES)
        assert all(re.fullmatch(r"\d+\.\d / \d+\.\d", cell) for cell in row[3:])
    columns = next(line for line in lines if line.startswith("| work |"))
    assert all(f"built-in, {s:,} rows | SQL, {s:,} rows" in columns for s in SIZES)
    parts = _rows(lines, "part")
    assert [row[0] for row in parts] == list(benchmark_sql.PARTS)
    assert all(re.fullmatch(r"\d+\.\d", row[1]) for row in parts)


def test_the_section_has_a_row_per_pair_and_per_part() -> None:
    lines = benchmark_sql.section(
        _fake_results(), dict.fromkeys(benchmark_sql.PARTS, 3.25), 1_000, 7
    )
    _check(lines)
    assert lines[0] == benchmark_sql.BEGIN and lines[-1] == benchmark_sql.END
    assert "| trim one text column | `strip column=city` |" in "\n".join(lines)
    assert "| 1.0 / 0.5 | 20.0 / 19.5 | 1.0 / 0.5 | 20.0 / 19.5 |" in "\n".join(lines)


def test_writing_the_section_replaces_only_it(tmp_path: Path) -> None:
    report = tmp_path / "BENCHMARKS.md"
    other = [benchmark_real_tables.BEGIN, "## Real tables", "kept", benchmark_real_tables.END]
    report.write_text("# Benchmarks\n\n## Memory\n\nkept too\n\n" + "\n".join(other) + "\n")
    old = benchmark_sql.section(_fake_results(), dict.fromkeys(benchmark_sql.PARTS, 1.0), 1_000, 7)
    benchmark_sql.write_section(report, old)
    new = [*old[:-1], "one more line", old[-1]]
    benchmark_sql.write_section(report, new)
    text = report.read_text()
    assert text.count(benchmark_sql.BEGIN) == 1 and "one more line" in text
    assert text.startswith("# Benchmarks\n\n## Memory\n\nkept too\n\n" + "\n".join(other))
    assert text.endswith("one more line\n" + benchmark_sql.END + "\n")


def test_the_committed_section_is_the_scripts_current_one() -> None:
    text = REPORT.read_text(encoding="utf-8")
    _check(_section(text))
    # A full `scripts/benchmark.py` run keeps the report from the real-tables section on:
    # this section comes after it, so such a run leaves it in place.
    assert text.index(benchmark_real_tables.BEGIN) < text.index(benchmark_sql.BEGIN)
