"""The heuristic's real-table mode: rules learned from labels, applied in SQL."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.agents.real_repair import LabelledRepairer
from dataclean_env.agents.reference import NoOpAgent
from dataclean_env.agents.repair_rules import Fill, Reorder, Replace, learn_column
from dataclean_env.agents.unlabelled_repair import one_edit, typo_map
from dataclean_env.benchmark.results import EpisodeResult
from dataclean_env.benchmark.stats import summarise
from dataclean_env.engine.episode import Episode
from dataclean_env.runner.report import markdown
from dataclean_env.schemas import Action
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry, registry_for
from tests.dirty_pair import write_pair

ROOT = Path(__file__).resolve().parents[3]


def play(registry: TaskRegistry, task_id: str, agent: object) -> tuple[dict, list[str]]:
    episode = Episode("h", registry.make(task_id, None))
    result = episode.result()
    operations = []
    while not episode.done:
        action = agent.act(result.observation.model_dump())  # type: ignore[attr-defined]
        operations.append(action["operation"])
        result = episode.step(Action(**action))
    return episode.repair(), operations  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("task_id", "precision", "recall", "f1"),
    [
        ("rayyan-labelled", 0.7837078651685393, 0.8829113924050633, 0.8303571428571429),
        ("rayyan", 0.5779816513761468, 0.06645569620253164, 0.11920529801324503),
    ],
)
def test_the_heuristic_repairs_rayyan_exactly_so(
    registry: TaskRegistry, task_id: str, precision: float, recall: float, f1: float
) -> None:
    repair, _ = play(registry, task_id, HeuristicAgent())
    assert (repair["precision"], repair["recall"], repair["f1"]) == (precision, recall, f1)
    nothing, _ = play(registry, task_id, NoOpAgent())
    assert repair["f1"] >= nothing["f1"]


def test_without_labels_it_reads_with_queries_and_repairs_in_sql_steps(
    registry: TaskRegistry,
) -> None:
    _, operations = play(registry, "rayyan", HeuristicAgent())
    assert operations == ["query"] * 8 + ["sql", "sql", "finish"]


def generated(tmp_path: Path) -> TaskRegistry:
    folder = tmp_path / "extra" / "shop_orders"
    assert write_pair(folder) == 329
    settings = Settings(datasets_dir=ROOT / "datasets", extra_datasets=str(tmp_path / "extra"))
    return registry_for(settings)


def test_without_labels_it_repairs_a_generated_2400_row_table_within_its_budget(
    tmp_path: Path,
) -> None:
    """FD violations, typos and null tokens are all repaired (264 cells); the 65 mangled
    names are found but their lost letter is not recovered (dropping the mark is wrong)."""
    registry = generated(tmp_path)
    repair, operations = play(registry, "shop_orders", HeuristicAgent())
    assert operations == ["query"] * 12 + ["sql", "sql", "finish"]  # of 30 steps
    assert repair == {
        "precision": 264 / 329,
        "recall": 264 / 329,
        "f1": 0.8024316109422492,
        "cells_changed": 329,
    }
    # with labels: the same (a replacement one labelled cell shows, `MA` -> `IL`, rewrites
    # only a value of at most 3 cells, so it leaves the state `MA` alone)
    labelled, _ = play(registry, "shop_orders-labelled", HeuristicAgent())
    assert labelled == repair


def test_one_edit_typos_go_to_a_far_more_frequent_value_only() -> None:
    assert one_edit("Pecil", "Pencil") and one_edit("Stpler", "Stapler")
    assert not one_edit("eng", "ENG") and not one_edit("Pencil", "Pencil")
    counts = [("Pencil", 387), ("Marker", 380), ("Pecil", 13), ("Maker", 50), ("12", 1)]
    assert typo_map(counts) == {"Pecil": "Pencil"}  # Maker: only 7.6x as frequent
    assert typo_map([("English", 95), ("english", 2), ("Eng", 2)]) == {}


def test_the_labelled_mode_queries_labels_applies_and_finishes(registry: TaskRegistry) -> None:
    _, operations = play(registry, "rayyan-labelled", HeuristicAgent())
    assert operations == ["query", "label"] + ["query"] * 8 + ["sql", "sql", "finish"]


def planted(tmp_path: Path) -> TaskRegistry:
    """A clean table of 200 rows and its dirty copy with two documented corruptions:
    every third row's ISO date `2024-03-07` is written day/month/year unpadded (`7/3/2024`),
    and every fifth row's unknown issue `-1` is written as an empty cell."""
    folder = tmp_path / "extra" / "papers"
    folder.mkdir(parents=True)
    clean, dirty = ["id,title,published,issue"], ["id,title,published,issue"]
    for i in range(200):
        year, month, day = 1990 + i % 30, 1 + i % 12, 1 + (i * 7) % 28
        iso = f"{year}-{month:02d}-{day:02d}"
        issue = "-1" if i % 5 == 0 else str(1 + i % 9)
        clean.append(f"{1000 + i},Paper {i},{iso},{issue}")
        shown = f"{day}/{month}/{year}" if i % 3 == 0 else iso
        dirty.append(f"{1000 + i},Paper {i},{shown},{'' if issue == '-1' else issue}")
    (folder / "clean.csv").write_text("\n".join(clean) + "\n", encoding="utf-8")
    (folder / "dirty.csv").write_text("\n".join(dirty) + "\n", encoding="utf-8")
    (folder / "task.json").write_text(json.dumps({"key": "id"}), encoding="utf-8")
    settings = Settings(datasets_dir=ROOT / "datasets", extra_datasets=str(tmp_path / "extra"))
    return registry_for(settings)


def test_it_learns_a_date_permutation_and_a_null_convention_beyond_rayyan(
    tmp_path: Path,
) -> None:
    registry = planted(tmp_path)
    repair, operations = play(registry, "papers-labelled", HeuristicAgent())
    assert operations == ["query", "label"] + ["query"] * 4 + ["sql", "finish"]
    assert (repair["precision"], repair["recall"], repair["f1"]) == (1.0, 1.0, 1.0)
    assert repair["cells_changed"] == 67 + 40
    unlabelled, _ = play(registry, "papers", HeuristicAgent())
    nothing, _ = play(registry, "papers", NoOpAgent())
    assert unlabelled["f1"] >= nothing["f1"]


def test_a_rule_is_kept_only_if_it_fixes_more_labelled_cells_than_it_breaks() -> None:
    swap = [("4/2/15", "2/15/04"), ("3/1/99", "1/99/03"), ("1/1/71", "1/1/71")]
    assert learn_column(swap) == [
        Reorder(("", "/", "/", ""), ("", "/", "/", ""), (1, 2, 0), ("int", "int", "pad2"))
    ]
    # the same rewrite when most labelled cells of that shape are already right: dropped,
    # only the exact value the label showed is mapped
    mostly_right = [("4/2/15", "2/15/04"), ("1/2/03", "1/2/03"), ("5/6/07", "5/6/07")]
    assert learn_column(mostly_right) == [Replace("4/2/15", "2/15/04", rare=True)]
    assert learn_column([("", "-1"), ("", "-1"), ("", ""), ("7", "7")]) == [Fill("-1")]
    # one labelled cell: a replacement is kept only for a rare value, a fill not at all
    assert learn_column([("N/A", ""), ("x", "x")]) == [Replace("N/A", "", rare=True)]
    assert learn_column([("", "-1"), ("7", "7")]) == []


def test_the_real_table_docs_quote_the_baseline_report() -> None:
    """docs/real-tables.md's figures for the reference agent are rows of the report (the
    protocol's section has its own test, tests/unit/runner/test_protocol_report.py)."""
    report = (ROOT / "docs" / "BASELINES.md").read_text(encoding="utf-8").splitlines()
    page = (ROOT / "docs" / "real-tables.md").read_text(encoding="utf-8")
    quoted = [
        line
        for line in page.split("<!-- protocol:begin -->")[0].splitlines()
        if line.startswith("| rayyan")
    ]
    assert [line.split(" | ")[:2] for line in quoted] == [
        [f"| {task}", f"`{agent}`"]
        for task in ("rayyan", "rayyan-labelled")
        for agent in ("noop-baseline", "heuristic-baseline")
    ]
    assert all(line in report for line in quoted)


def test_the_report_says_the_mode_each_real_table_row_was_measured_in() -> None:
    figures = {"precision": 0.5, "recall": 0.25, "f1": 1 / 3, "cells_changed": 4}
    results = [
        EpisodeResult("rayyan", "eval", seed, "heuristic-baseline", 9, 1 / 3, False, {}, 0, 0, 0.1)
        for seed in (0, 1)
    ]
    results = [replace(r, repair=figures) for r in results]
    text = markdown(summarise(results, str), [], "run", "plot.png")
    assert "| task | agent | mode | episodes | F1 |" in text
    assert (
        "| rayyan | `heuristic-baseline` | visible | 2 | 0.3333 | [0.3333, 0.3333] | 0.5000 "
        "| 0.2500 | 4.0 |" in text
    )
    assert "`reward_mode=hidden`" in text


def test_a_labelled_row_gold_lacks_teaches_nothing_and_breaks_nothing() -> None:
    """`label` answers None for a key the clean table lacks (a corpus row a layer added): the
    learner skips it instead of failing (it did, in the offline inference run)."""
    learner = LabelledRepairer("row_id")
    learner.dirty = {"1": {"city": "Bostn"}, "2": {"city": "Bostn"}}
    assert learner._repairs({"1": {"city": "Boston"}, "2": None}) == learner._repairs(
        {"1": {"city": "Boston"}}
    )
