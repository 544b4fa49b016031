"""Every real table repairable within its budget (issue 39, item 1): on generated dirty/clean
pairs of 1,000 and 50,000 rows with 10% and 40% of their cells wrong, many of them sources
conflicting over one entity, the reference plan played through the engine reaches F1 1.0
within the step budget the task states, and that budget is computed from the table."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.operations.rows import MAX_CELL_ASSIGNMENTS
from dataclean_env.schemas import Action
from dataclean_env.settings import Settings
from dataclean_env.table.limits import EngineLimits, untimed_limits
from dataclean_env.tasks import registry_for
from dataclean_env.tasks.custom import CustomFamily
from dataclean_env.tasks.repair_plan import BUDGET_SLACK, DEFAULT_MAX_STEPS, repair_budget
from tests.dirty_pair import write_conflict_pair


def played(folder: Path, limits: EngineLimits | None = None) -> tuple[Episode, int]:
    """The pair's task, its reference plan played through the engine: (episode, plan steps)."""
    family = CustomFamily([folder.parent])
    loaded = family.tasks[folder.name]
    episode = Episode("plan", family.make(folder.name, 4), limits)
    for action in loaded.reference_plan:
        episode.step(Action(**action))
    return episode, len(loaded.reference_plan)


def conflicting_entities(folder: Path) -> int:
    """Entities whose reports disagree on a fact in the dirty table."""
    with open(folder / "dirty.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    facts: dict[str, set[tuple[str, ...]]] = {}
    for row in rows:
        facts.setdefault(row["entity"], set()).add((row["city"], row["departs"], row["price"]))
    return sum(len(seen) > 1 for seen in facts.values())


@pytest.mark.parametrize("share", [0.1, 0.4])
def test_the_plan_repairs_a_1000_row_table_within_its_budget(tmp_path, share) -> None:
    folder = tmp_path / "reports"
    wrong = write_conflict_pair(folder, 1000, share)
    assert wrong == round(share * 1000 * 7)
    assert conflicting_entities(folder) > 100
    episode, steps = played(folder)
    assert episode.info()["repair"] == {
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "cells_changed": wrong,
    }
    assert episode.spec.max_steps == DEFAULT_MAX_STEPS  # small tables keep the default
    assert steps <= episode.spec.max_steps and not episode.done


def test_the_plan_repairs_50000_rows_with_40_percent_wrong_within_the_stated_budget(
    tmp_path,
) -> None:
    """The largest case the issue names, played step by step (about 90 steps)."""
    folder = tmp_path / "reports"
    wrong = write_conflict_pair(folder, 50_000, 0.4)
    episode, steps = played(folder, untimed_limits())
    assert episode.info()["repair"] == {
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "cells_changed": wrong,
    }
    budget = math.ceil(wrong / MAX_CELL_ASSIGNMENTS) + BUDGET_SLACK
    assert episode.spec.max_steps == budget == 150
    assert steps <= budget - BUDGET_SLACK
    assert f"The step budget, {budget}, is computed from the table" in episode.spec.description
    assert episode.observation().steps_remaining == budget - steps


def test_the_budget_grows_with_the_wrong_cells_and_always_fits_the_plan() -> None:
    assert repair_budget(0, 0) == DEFAULT_MAX_STEPS
    assert repair_budget(20_000, 3) == DEFAULT_MAX_STEPS
    assert repair_budget(20_001, 3) == 21 + BUDGET_SLACK
    assert repair_budget(5_000, 60) == 60 + BUDGET_SLACK


def test_resets_of_a_large_table_share_its_opening(tmp_path) -> None:
    """The registry keeps only small tasks; a large custom table's unshuffled task is made
    once by its family, so a reset does not read the table again."""
    folder = tmp_path / "tables" / "reports"
    write_conflict_pair(folder, 3000, 0.1)  # 24,000 cells: more than the registry keeps
    registry = registry_for(Settings(extra_datasets=str(folder.parent)))
    first = Episode("a", registry.make("reports", None))
    second = Episode("b", registry.make("reports", None))
    assert first.task is second.task and first.snapshot is second.snapshot
    shuffled = registry.make("reports", 1)
    assert shuffled is not registry.make("reports", 1)  # a seed's shuffle is made anew
    assert shuffled.dirty["id"].tolist() != first.task.dirty["id"].tolist()
