"""The shipped baselines on the suite: the committed file the docs are rendered from, the
README's and BASELINES.md's copies of it, one replayed instance of every family, and the
normalisation's anchors as the file stores them. Replaying the anchors on a sample of the
suite and on every task kind is an in-process sweep: tests/api/test_suite_anchors.py."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

import dataclean_env.table.limits as limits_module
from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.benchmark import measure
from dataclean_env.benchmark.baselines import AGENTS, instance_row
from dataclean_env.benchmark.measure import final_score
from dataclean_env.benchmark.normalised import MEANING, anchors
from dataclean_env.benchmark.results import EpisodeResult
from dataclean_env.benchmark.suite import Cell, suite_named
from dataclean_env.engine import episode as episode_module
from dataclean_env.engine.doors import attempt
from dataclean_env.engine.episode import Episode
from dataclean_env.runner import suite_report
from dataclean_env.runner.cli import normalised_summary
from dataclean_env.tasks.generated import FAMILIES
from tests.support import ROOT, TASK_IDS

README = (ROOT / "README.md").read_text(encoding="utf-8")
STORED = suite_report.load()
ROWS = STORED["episodes"]


@pytest.fixture(scope="module")
def suite_table() -> list[suite_report.SuiteSummary]:
    """The stored file's summaries (100 bootstrap intervals), computed once for the module."""
    return suite_report.summaries(STORED)


def test_the_suite_file_names_this_definition_and_the_measured_draw(suite_table) -> None:
    assert STORED["definition_digest"] == measure.definition_digest()
    assert STORED["suite_version"] == suite_named("full").version
    assert STORED["agents"] == ["noop", "random", "template", "heuristic", "oracle"]
    assert len(ROWS) == suite_named("full").episodes == 780
    interval = json.loads(measure.INTERVAL.read_text(encoding="utf-8"))
    # The same draw as the interval's measurement, and the heuristic's same scores there.
    assert [[r["family"], r["difficulty"], r["index"]] for r in ROWS] == [
        s[:3] for s in interval["scores"]
    ]
    assert [r["normalised"]["heuristic"] for r in ROWS] == [s[3] for s in interval["scores"]]
    [heuristic] = [
        s for s in suite_table if (s.group, s.agent) == (suite_report.SUITE_ROW, "heuristic")
    ]
    assert f"{heuristic.normalised.mean:.4f}" == f"{interval['mean']:.4f}" == "0.6576"


def test_the_readme_and_baselines_md_show_what_the_report_renders_from_the_file(
    suite_table,
) -> None:
    assert suite_report.block_of(README) == suite_report.readme_block(STORED, suite_table)
    section = "\n".join(suite_report.baselines_section(STORED, suite_table))
    assert section in (ROOT / "docs" / "BASELINES.md").read_text(encoding="utf-8")


def test_one_instance_of_every_family_replays_to_the_stored_row() -> None:
    first = {}
    for row in ROWS:
        first.setdefault(row["family"], row)
    assert len(first) == 10  # every family, the corpus too
    for row in first.values():
        cell = Cell(row["family"], row["difficulty"])
        assert instance_row(cell, int(row["index"])) == row


def test_the_readme_page_report_and_runner_say_the_same_sentence(registry, suite_table) -> None:
    page = (ROOT / "static" / "index.html").read_text(encoding="utf-8")
    assert f'<p id="score-meaning" class="muted">{MEANING}</p>' in page
    assert MEANING in suite_report.readme_block(STORED, suite_table) and MEANING in README
    assert MEANING in suite_report.baselines_section(STORED, suite_table)
    idle = anchors(lambda: registry.make("crm", 0, "eval")).do_nothing
    result = EpisodeResult("crm", "eval", 0, "noop-baseline", 1, idle, False, {}, 0, 0, 0.0)
    assert normalised_summary([result], registry) == (
        f"1 episodes, mean normalised score 0.0000. {MEANING}"
    )


def test_the_suite_instances_keep_the_readme_claims() -> None:
    for row in ROWS:
        if row["family"] in FAMILIES:
            assert 0.18 <= row["do_nothing"] <= 0.20, row["index"]
        else:
            assert row["do_nothing"] == 0.0001, row["index"]
        assert row["oracle"] == 0.9999


def test_the_heuristic_solves_every_fixed_task_of_the_tutorial_track(registry) -> None:
    # docs/tasks.md: the fixed tasks are solved by the heuristic, hence outside the suite.
    for task_id in TASK_IDS:
        assert final_score(registry.make(task_id, 0, "eval"), HeuristicAgent()) == 0.9999
    assert not set(TASK_IDS) & set(suite_named("full").families)
    assert set(AGENTS) == {"noop", "random", "template", "heuristic", "oracle"}


def test_the_anchors_do_not_depend_on_the_engine_time_limit(registry, monkeypatch) -> None:
    # A step past its time limit is refused: on a machine busy enough, the reference plan
    # scores less. A limit of 0 s makes that certain; the anchors play untimed all the same.
    def make():
        return registry.make("rayyan_audit", 0, "eval")

    zero = replace(limits_module.default_limits(), step_seconds=0.0)
    task = make()
    timed = Episode("timed", task, zero)
    refused = [attempt(timed, planned).info.get("error") for planned in task.reference_plan]
    assert "STEP_TIME_LIMIT" in {error["code"] for error in refused if error}
    assert timed.score < 0.9999
    # The engine's default limit set to 0 s, wherever it is read.
    for module in (limits_module, episode_module):
        monkeypatch.setattr(module, "default_limits", lambda: zero)
    assert anchors(make).oracle == 0.9999
