"""The validation sweep's file and its table in docs/benchmark.md.

    uv run python scripts/validation_sweep.py              # seeds 0-9 of every family
    uv run python scripts/validation_sweep.py --check      # exit 1 when the table is stale

The sweep is too slow for every test run, so the script writes every instance's outcome to
`suites/validation.json` and the table is rendered from that file; a test replays some of
its instances to the stored outcomes and holds the table to the file.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from dataclean_env.benchmark.selection import parse_seeds
from dataclean_env.benchmark.suite import DEFINITION
from dataclean_env.benchmark.validation import (
    POLICIES,
    RANDOM,
    Outcome,
    families,
    random_mean,
    sweep,
    violations,
)
from dataclean_env.tasks import default_registry

RESULTS = DEFINITION.parent / "validation.json"
DOC = Path(__file__).resolve().parents[2] / "docs" / "benchmark.md"
START, END = "<!-- validation:start -->", "<!-- validation:end -->"
SWEPT = [p for p in POLICIES if p != "do nothing"]


def load(path: Path = RESULTS) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def outcomes(data: dict[str, Any]) -> list[Outcome]:
    return [Outcome(**row) for row in data["outcomes"]]


def dump(data: dict[str, Any]) -> str:
    """One instance a line, so a change shows as the lines it moved."""
    head = {k: v for k, v in data.items() if k != "outcomes"}
    text = json.dumps(head, indent=1)[:-2] + ',\n "outcomes": [\n'
    text += ",\n".join("  " + json.dumps(row) for row in data["outcomes"])
    return text + "\n ]\n}\n"


def _mean_text(mean: float | None) -> str:
    return "n/a" if mean is None else f"{mean:+.4f}"


def _cell(margins: list[float | None], policy: str) -> str:
    present = [m for m in margins if m is not None]
    if not present:
        return "n/a"
    value = sum(present) / len(present) if policy == RANDOM else max(present)
    return f"{value:+.4f}".replace("-0.0000", "0.0000").replace("+0.0000", "0.0000")


def table(data: dict[str, Any]) -> str:
    """The part of docs/benchmark.md between the markers."""
    rows = outcomes(data)
    head = "| family | " + " | ".join(SWEPT) + " | reference plan |"
    lines = [
        START,
        "<!-- Written by scripts/validation_sweep.py from "
        "dataclean_env/benchmark/suites/validation.json; do not edit. -->",
        f"Command: `{data['command']}`: seeds {data['seeds']} of the `{data['split']}` split, "
        f"{len(rows)} instances. Each cell is the highest score a policy reached above doing "
        "nothing on any instance (the random agent: its mean final score above doing "
        "nothing); 0.0000 or below means never above. The last column is the reference "
        "plan's lowest score.",
        "",
        f"The random agent over the whole sweep: {_mean_text(random_mean(rows))} "
        "(its mean final score above doing nothing).",
        "",
        head,
        "|---|" + "---:|" * (len(SWEPT) + 1),
    ]
    for family in dict.fromkeys(o.family for o in rows):
        mine = [o for o in rows if o.family == family]
        cells = [_cell([o.margins[p] for o in mine], p) for p in SWEPT]
        cells.append(f"{min(o.oracle for o in mine):.4f}")
        lines.append(f"| {family} | " + " | ".join(cells) + " |")
    found = violations(rows)
    lines += ["", f"Violations: {len(found)}." + "".join(f" {v}." for v in found), END]
    return "\n".join(lines)


def with_table(text: str, data: dict[str, Any]) -> str:
    before, rest = text.split(START, 1)
    return before + table(data) + rest.split(END, 1)[1]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="scripts/validation_sweep.py", description=__doc__)
    parser.add_argument("--seeds", default="0-9", help="seeds of every family (default 0-9)")
    parser.add_argument("--split", default="eval")
    parser.add_argument("--check", action="store_true", help="exit 1 when the table is stale")
    args = parser.parse_args(argv)
    text = DOC.read_text(encoding="utf-8")
    if args.check:
        if with_table(text, load()) != text:
            print(f"{DOC} is stale: run scripts/validation_sweep.py", file=sys.stderr)
            return 1
        return 0
    started = time.perf_counter()
    rows = sweep(default_registry(), parse_seeds(args.seeds), args.split)
    data = {
        "command": shlex.join(["uv", "run", "python", "scripts/validation_sweep.py", *argv]),
        "seeds": args.seeds,
        "split": args.split,
        "families": list(families()),
        "outcomes": [asdict(o) for o in rows],
    }
    RESULTS.write_text(dump(data), encoding="utf-8")
    DOC.write_text(with_table(text, data), encoding="utf-8")
    found = violations(rows)
    print(
        f"{len(rows)} instances in {time.perf_counter() - started:.0f} s; {len(found)} violations",
        file=sys.stderr,
    )
    for violation in found:
        print(violation, file=sys.stderr)
    return 1 if found else 0
