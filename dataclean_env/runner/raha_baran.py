"""The report's Raha + Baran section, rendered from the committed results of
`integrations/raha/raha_baran.py` (docs/raha_baran.json): that agent runs in its own venv
(`.ci/setup-raha.sh`), minutes per run, so the baseline report reads its results rather than
playing it.

    uv run python -m dataclean_env.runner.raha_baran   # rewrite the section of docs/BASELINES.md
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from dataclean_env.benchmark.stats import CONFIDENCE, bootstrap_interval

RESULTS = Path("docs") / "raha_baran.json"
HEADING = "### Real tables: Raha and Baran through the environment"
END = "![Mean final score"  # the line the section stands before (report.markdown's plot)
SOURCES = (
    'Mahdavi et al., "Raha: A Configuration-Free Error Detection System", SIGMOD 2019; '
    'Mahdavi and Abedjan, "Baran: Effective Error Correction via a Unified Context '
    'Representation and Transfer Learning", PVLDB 13 (VLDB 2020)'
)


def load(path: Path = RESULTS) -> dict[str, Any] | None:
    """The committed results, or None where there are none (e.g. an installed package)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def markdown(results: dict[str, Any] | None) -> list[str]:
    """The section's lines (none without results)."""
    if results is None:
        return []
    runs = results["runs"]
    f1 = [r["f1"] for r in runs]
    low, high = bootstrap_interval(f1)
    versions = ", ".join(f"{name} {v}" for name, v in results["versions"].items())
    seeds = ", ".join(str(s) for s in results["seeds"])
    return [
        HEADING,
        "",
        f"`{results['agent']}`: Raha's error detection and Baran's error correction (PyPI "
        "`raha`, BigDaMa group, TU Berlin) as an agent of the environment, "
        "`integrations/raha/raha_baran.py`, in the venv `.ci/setup-raha.sh` builds "
        f"({versions}). Over HTTP it reads the table with `query`, takes the "
        f"{results['label_budget']} tuples Raha samples through one `label` step (the only "
        "gold it sees; Baran learns from the same tuples), and applies Baran's corrections "
        "as `map` and `set_cell` steps in `program`s; the figures are this project's "
        f"grader's, in the evaluation mode (`{results['mode']}`). One run per seed (the "
        f"episode's row order and Raha's sampling): seeds {seeds}. Command: "
        f"`bash .ci/setup-raha.sh && ~/.cache/data-cleaning-openenv/raha/bin/python "
        f"{results['command']} --out {RESULTS}`.",
        "",
        f"| task | agent | runs | F1 | {CONFIDENCE:.0%} interval | F1 sd | F1 min-max "
        "| precision | recall | cells changed | labels used | seconds per run |",
        "|---|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|",
        f"| {results['task']} | `{results['agent']}` | {len(runs)} | {statistics.fmean(f1):.4f} "
        f"| [{low:.4f}, {high:.4f}] | {_sd(f1):.4f} | {min(f1):.4f}-{max(f1):.4f} "
        f"| {_mean(runs, 'precision'):.4f} | {_mean(runs, 'recall'):.4f} "
        f"| {_mean(runs, 'cells_changed'):.1f} | {max(r['labels_used'] for r in runs)} "
        f"| {_mean(runs, 'seconds'):.0f} |",
        "",
        "| seed | F1 | precision | recall | cells detected | cells changed | steps | seconds |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {r['seed']} | {r['f1']:.4f} | {r['precision']:.4f} | {r['recall']:.4f} "
            f"| {r['cells_detected']} | {r['cells_changed']} | {r['steps']} | {r['seconds']:.0f} |"
            for r in runs
        ),
        "",
        f"Published figures for Rayyan: see the papers ({SOURCES}); they are not copied here. "
        f"Run times are wall-clock seconds of one run, {results['jobs']} at once, on the "
        "machine that wrote the results.",
        "",
    ]


def splice(report: str, section: list[str]) -> str:
    """`report` with its Raha + Baran section replaced by `section` (or inserted before the
    plot)."""
    lines = report.split("\n")
    if HEADING in lines:
        start = lines.index(HEADING)
        end = next(i for i in range(start, len(lines)) if lines[i].startswith(END))
    else:
        start = end = next(i for i, line in enumerate(lines) if line.startswith(END))
    return "\n".join([*lines[:start], *section, *lines[end:]])


def _mean(runs: list[dict[str, Any]], name: str) -> float:
    return statistics.fmean(float(r[name]) for r in runs)


def _sd(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def main() -> int:
    report = Path("docs") / "BASELINES.md"
    text = report.read_text(encoding="utf-8")
    report.write_text(splice(text, markdown(load())), encoding="utf-8")
    print(f"wrote the Raha + Baran section of {report}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
