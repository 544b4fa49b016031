"""The report's Raha + Baran section is rendered from the committed results
(docs/raha_baran.json, written by integrations/raha/raha_baran.py) and matches them."""

from __future__ import annotations

import pytest

from dataclean_env.runner import raha_baran

pytestmark = pytest.mark.unit


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
