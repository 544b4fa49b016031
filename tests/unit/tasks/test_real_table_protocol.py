"""Real tables: the oracle's plan built from the pair, and the labelled variants' `label`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.leaderboard.ranked import RankedEpisode
from dataclean_env.schemas import Action
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry, registry_for

ROOT = Path(__file__).resolve().parents[3]


def step(episode: Episode, operation: str, **parameters: Any) -> Any:
    return episode.step(Action(operation=operation, parameters=parameters))


def replay(episode: Episode) -> float:
    for action in episode.task.reference_plan:
        if episode.done:
            break
        step(episode, action["operation"], **action["parameters"])
    return episode.repair()["f1"]  # type: ignore[index]


def brought(tmp_path: Path) -> TaskRegistry:
    folder = tmp_path / "extra" / "people"
    folder.mkdir(parents=True)
    (folder / "dirty.csv").write_text(
        "name,city\nana,Berlin\nBob ,berlin\n,Paris\nana,N/A\n", encoding="utf-8"
    )
    (folder / "clean.csv").write_text(
        "name,city\nAna,Berlin\nBob,Berlin\nCy,Paris\nAna,\n", encoding="utf-8"
    )
    settings = Settings(datasets_dir=ROOT / "datasets", extra_datasets=str(tmp_path / "extra"))
    return registry_for(settings)


@pytest.mark.parametrize("task_id", ["rayyan", "rayyan-labelled"])
def test_the_oracle_plan_repairs_rayyan_within_its_budget(
    registry: TaskRegistry, task_id: str
) -> None:
    task = registry.make(task_id, 3)
    # a program of `map`s, then one `set_cells` of the cells no column rule repairs
    assert [a["operation"] for a in task.reference_plan] == ["program", "set_cells"]
    assert len(task.reference_plan) <= task.spec.max_steps == 30
    assert replay(Episode("o", task)) == 1.0


def test_the_oracle_plan_repairs_a_brought_folder(tmp_path: Path) -> None:
    registry = brought(tmp_path)
    for task_id in ("people", "people-labelled"):
        assert replay(Episode("o", registry.make(task_id, None))) == 1.0


def test_label_reveals_clean_rows_within_the_budget(registry: TaskRegistry) -> None:
    episode = Episode("l", registry.make("rayyan-labelled", None))
    result = step(episode, "label", row_ids=[235295, 498345])
    shown = json.loads(result.observation.message.split(": ", 1)[1])
    assert shown["498345"]["article_jcreated_at"] == "2/15/04"
    assert result.info["labels_used"] == 2
    step(episode, "label", row_ids=list(episode.task.dirty["id"][:20]))
    before = (episode.step_count, episode.labelled, episode.score)
    with pytest.raises(EnvError) as refused:
        step(episode, "label", row_ids=[int(episode.task.dirty["id"][20])])
    assert refused.value.code == "LABEL_BUDGET_EXCEEDED"
    assert (episode.step_count, episode.labelled, episode.score) == before


def test_label_is_refused_without_labels_and_on_the_leaderboard(registry: TaskRegistry) -> None:
    with pytest.raises(EnvError) as refused:
        step(Episode("n", registry.make("rayyan", None)), "label", row_ids=[235295])
    assert refused.value.code == "OPERATION_NOT_ALLOWED"
    ranked = RankedEpisode("r", registry.make("rayyan-labelled", None), 1e18, lambda e: None)
    with pytest.raises(EnvError) as refused:
        step(ranked, "label", row_ids=[235295])
    assert refused.value.code == "LABELS_NOT_OFFERED"
    assert ranked.step_count == 0 and ranked.labelled == frozenset()


def test_value_counts_and_find_rows_read_beyond_the_profiles(registry: TaskRegistry) -> None:
    episode = Episode("r", registry.make("rayyan", None))
    shapes = step(episode, "value_counts", column="article_jcreated_at", by="shape", limit=3)
    assert shapes.observation.message == (
        "article_jcreated_at: 4 distinct shapes, 87 empty; shapes 0..2 with counts: "
        '[["9/9/99", 781], ["99/9/99", 88], ["9/99/99", 35]]'
    )
    found = step(episode, "find_rows", column="article_jissue", value=None, limit=2)
    assert found.observation.message.startswith("53 rows match; rows 0..1: ")
    assert episode.repair() == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "cells_changed": 0}
