"""`scripts/benchmark.py --sizes-only` replaces its own section and goal row of
docs/BENCHMARKS.md and leaves every other line as the last full run wrote it."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import benchmark  # noqa: E402

BEFORE = """# Benchmarks

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


def test_sizes_only_rewrites_its_section_alone(tmp_path: Path) -> None:
    out = tmp_path / "BENCHMARKS.md"
    out.write_text(BEFORE, encoding="utf-8")
    assert benchmark.sizes_only(out, [100]) == 0
    text = out.read_text(encoding="utf-8")
    lines = text.split("\n")
    assert lines[:4] == BEFORE.split("\n")[:4]
    assert "| p99 at 16 clients | < 100 ms | kept |" in lines
    assert text.count("## Step cost against table size") == 1
    assert "| 100 | 800 | 0.8 | 13.4 |" not in text  # the old row is gone
    rows = [line for line in lines if line.startswith("| 100 | 800 |")]
    assert len(rows) == 1 and len(rows[0].split("|")) == 9  # seven columns
    assert "median 2639 ms" in text  # no 100,000-row run: the goal row is left alone
    assert text.endswith(
        "## Throughput and latency against concurrent clients (REST)\n\nkept as it was\n"
    )
    assert (tmp_path / "step_cost.png").stat().st_size > 0
