"""Issue 39, item 1 on the real tables: on every corpus table (its hardest mix of error
layers) and on rayyan, the reference plan played through the engine reaches F1 >= 0.999
within the step budget the task states, with steps to spare (the episode is not over)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.schemas import Action
from dataclean_env.settings import Settings
from dataclean_env.tasks import registry_for
from dataclean_env.tasks.corpus import CorpusFamily
from dataclean_env.tasks.registry import Task
from tests.support import CORPUS_TABLES

ROOT = Path(__file__).resolve().parents[3]


def hardest(task_id: str) -> Task:
    """The first eval instance with the most layers a difficulty draws ("hard")."""
    family = CorpusFamily()
    return next(
        task
        for seed in range(100)
        if (task := family.make(task_id, seed, "eval")).spec.difficulty == "hard"
    )


def replay(task: Task) -> Episode:
    episode = Episode("plan", task)
    for action in task.reference_plan:
        episode.step(Action(**action))
    return episode


def assert_repaired_within_budget(episode: Episode, task: Task) -> None:
    repair = episode.info()["repair"]
    assert repair["f1"] >= 0.999, (task.spec.task_id, repair)
    assert repair["precision"] >= 0.999 and repair["recall"] >= 0.999
    assert 0 < len(task.reference_plan) <= task.spec.max_steps
    assert not episode.done  # the budget left room after the repair (finish is still open)


@pytest.mark.parametrize("table", CORPUS_TABLES)
def test_the_plan_repairs_every_corpus_table_within_its_budget(table: str) -> None:
    task = hardest(f"corpus_{table}")
    assert_repaired_within_budget(replay(task), task)


def test_the_plan_repairs_rayyan_within_its_budget() -> None:
    registry = registry_for(Settings(datasets_dir=ROOT / "datasets"))
    task = registry.make("rayyan", None, shared=False)
    assert_repaired_within_budget(replay(task), task)
