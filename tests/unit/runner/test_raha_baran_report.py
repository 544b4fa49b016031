"""The report's Raha + Baran section is rendered from the committed results
(docs/raha_baran.json, written by integrations/raha/raha_baran.py) and matches them."""

from __future__ import annotations

import statistics

import pytest

from dataclean_env.benchmark.stats import bootstrap_interval
from dataclean_env.runner import raha_baran
from dataclean_env.tasks.custom import LABEL_BUDGET
from tests.support import ROOT

pytestmark = pytest.mark.unit

RESULTS = raha_baran.load(ROOT / raha_baran.RESULTS)
REPORT = (ROOT / "docs" / "BASELINES.md").read_text(encoding="utf-8")


def test_the_report_holds_the_section_rendered_from_the_results() -> None:
    section = raha_baran.markdown(RESULTS)
    assert "\n".join(section) in REPORT
    assert raha_baran.splice(REPORT, section) == REPORT  # rendering again changes nothing


def test_the_row_is_the_results_mean_over_at_least_five_seeds() -> None:
    assert RESULTS is not None
    runs = RESULTS["runs"]
    assert [r["seed"] for r in runs] == RESULTS["seeds"] and len(runs) >= 5
    assert all(r["labels_used"] <= LABEL_BUDGET for r in runs)
    f1 = [r["f1"] for r in runs]
    low, high = bootstrap_interval(f1)
    mean = statistics.fmean(f1)
    assert RESULTS["summary"]["f1"]["mean"] == round(mean, 4)
    row = next(line for line in REPORT.splitlines() if "| `raha-baran` |" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:6] == [
        "rayyan-labelled",
        "`raha-baran`",
        str(len(runs)),
        f"{mean:.4f}",
        f"[{low:.4f}, {high:.4f}]",
        f"{statistics.stdev(f1):.4f}",
    ]
    assert cells[7:9] == [
        f"{statistics.fmean(r['precision'] for r in runs):.4f}",
        f"{statistics.fmean(r['recall'] for r in runs):.4f}",
    ]
    for run in runs:  # one line per seed
        assert f"| {run['seed']} | {run['f1']:.4f} | {run['precision']:.4f} |" in REPORT


def test_the_section_goes_before_the_plot_and_replaces_itself() -> None:
    run = {"seed": 7, "f1": 0.5, "precision": 0.6, "recall": 0.4, "cells_changed": 10}
    run |= {"cells_detected": 12, "labels_used": 20, "steps": 5, "seconds": 61.0}
    results = {"agent": "raha-baran", "task": "t-labelled", "command": "x", "mode": "m"}
    results |= {"label_budget": 20, "jobs": 1, "seeds": [7], "versions": {}, "runs": [run]}
    section = raha_baran.markdown(results)
    assert "| t-labelled | `raha-baran` | 1 | 0.5000 | [0.5000, 0.5000] | 0.0000 " in section[6]
    assert section[10] == "| 7 | 0.5000 | 0.6000 | 0.4000 | 12 | 10 | 5 | 61 |"
    report = "# Baselines\n\n| a |\n\n![Mean final score by family and agent](x.png)\n"
    once = raha_baran.splice(report, [raha_baran.HEADING, "", "old", ""])
    lines = raha_baran.splice(once, section).split("\n")
    start = lines.index(raha_baran.HEADING)
    assert lines[:start] == ["# Baselines", "", "| a |", ""]
    assert lines[start:-2] == section
    assert lines[-2:] == ["![Mean final score by family and agent](x.png)", ""]
    assert raha_baran.markdown(None) == []
