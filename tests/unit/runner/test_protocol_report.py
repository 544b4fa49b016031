"""The literature's protocol report (scripts/real_tables_report.py): the pages show the
stored results, and a stored run is what the reference agent plays today."""

from __future__ import annotations

from typing import Any

import pytest

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.runner import protocol_report
from dataclean_env.tasks import TaskRegistry, default_registry
from tests.support import ROOT

PAGES = ("docs/real-tables.md", "docs/BASELINES.md")


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    stored = protocol_report.load(ROOT / protocol_report.RESULTS)
    assert stored is not None, "run scripts/real_tables_report.py"
    return stored


@pytest.fixture(scope="module")
def registry() -> TaskRegistry:
    return default_registry()


@pytest.mark.parametrize("page", PAGES)
def test_the_page_shows_the_stored_results(page: str, results: dict[str, Any]) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    start = text.index(protocol_report.BEGIN)
    end = text.index(protocol_report.END) + len(protocol_report.END)
    assert text[start:end] == "\n".join(protocol_report.markdown(results))


def test_the_results_cover_rayyan_and_every_corpus_table_at_5_seeds(
    results: dict[str, Any], registry: TaskRegistry
) -> None:
    corpus = sorted(t for t in registry.task_ids() if t.startswith("corpus_") and "-" not in t)
    assert [t["table"] for t in results["tables"]] == ["rayyan", *corpus]
    assert results["seeds"] == [0, 1, 2, 3, 4]
    for table in results["tables"]:
        for labels in (0, 20):
            runs = table["agents"][f"heuristic-baseline@{labels}"]
            assert [r["seed"] for r in runs] == results["seeds"]


def test_a_stored_run_is_what_the_agent_plays_now(
    results: dict[str, Any], registry: TaskRegistry
) -> None:
    (table,) = [t for t in results["tables"] if t["table"] == "corpus_seattle_weather"]
    played = protocol_report.play_reference(
        registry, "corpus_seattle_weather-labelled", [1], HeuristicAgent
    )
    assert played == [table["agents"]["heuristic-baseline@20"][1]]


def test_a_run_recorded_without_its_steps_keeps_its_correction_figures_only(
    registry: TaskRegistry,
) -> None:
    recorded = {"seed": 3, "precision": 0.5, "recall": 0.25, "f1": 0.3333, "task": "x"}
    run = protocol_report.replay(registry, "rayyan-labelled", recorded)
    assert run == {
        "seed": 3,
        "detection": None,
        "correction": {"precision": 0.5, "recall": 0.25, "f1": 0.3333},
    }
    lines = protocol_report.markdown(
        {"split": "train", "seeds": [3], "tables": [{"table": "t", "agents": {"a@20": [run]}}]}
    )
    assert (
        "| t | held out | `a` | 20 | 1 | not recorded | not recorded | not recorded "
        "| 0.500 ± 0.000 | 0.250 ± 0.000 | 0.333 ± 0.000 |" in lines
    )
    assert (
        "Mean correction F1 over the held-out tables every agent ran (t): `a` at 20 labels 0.333."
        in lines
    )


def test_held_out_means_compare_agents_on_the_tables_all_of_them_ran() -> None:
    held_out = {
        "`a` at 20 labels": {"x": 0.5, "y": 0.25, "z": 1.0},
        "`b` at 20 labels": {"y": 0.75, "x": 0.25},
    }
    assert protocol_report.held_out_means(held_out) == [
        "",
        "Mean correction F1 over the held-out tables every agent ran (x, y): "
        "`a` at 20 labels 0.375; `b` at 20 labels 0.500.",
    ]
    assert (
        protocol_report.held_out_means({"`a` at 0 labels": {"x": 0.5}, "`b` at 0 labels": {}}) == []
    )
