"""The environment checker runs over every task family, and can fail."""

from __future__ import annotations

import pytest

from dataclean_env.engine.checker import check_registry, check_task
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry, registry_for
from dataclean_env.tasks.fixed import FixedFamily
from tests.support import ALL_TASK_IDS, EXAMPLES, GENERATED_IDS

CHECKS = {
    "reset_observation",
    "reward_in_range",
    "reset_deterministic",
    "refusal_changes_nothing",
    "step_advances",
    "step_deterministic",
    "state_matches",
    "step_after_end_refused",
    "serialisable",
}


@pytest.mark.parametrize("task_id", ALL_TASK_IDS)
def test_every_task_passes_every_check(registry, task_id: str) -> None:
    report = check_task(registry, task_id)
    assert report["status"] == "passed", report
    assert set(report["checks"]) == CHECKS


@pytest.mark.parametrize("split", ["eval", "test"])
@pytest.mark.parametrize("task_id", GENERATED_IDS)
def test_generated_instances_of_every_split_pass(registry, task_id: str, split: str) -> None:
    assert check_task(registry, task_id, seed=7, split=split)["status"] == "passed"


def test_custom_datasets_pass() -> None:
    report = check_registry(registry_for(Settings(extra_datasets=str(EXAMPLES))))
    assert report["openenv_valid"] is True
    assert report["tasks"]["contacts"]["status"] == "passed"


def test_a_broken_task_fails_the_check(registry) -> None:
    class Broken:
        """A registry whose tasks cannot be built."""

        def spec(self, task_id):
            return registry.spec(task_id)

        def make(self, task_id, seed=None, split="train"):
            raise RuntimeError("no table")

        def task_ids(self):
            return ["easy_dedup_rename"]

    report = check_registry(Broken())
    assert report["openenv_valid"] is False
    assert report["tasks"]["easy_dedup_rename"] == {
        "status": "failed",
        "checks": {},
        "error": "RuntimeError: no table",
    }


def test_a_task_that_is_not_reproducible_fails_the_determinism_check(registry) -> None:
    class Unseeded:
        """Ignores the seed: every reset shuffles the rows anew."""

        def __init__(self):
            self.calls = 0

        def spec(self, task_id):
            return registry.spec(task_id)

        def make(self, task_id, seed=None, split="train", shared=True):
            self.calls += 1
            return registry.make(task_id, self.calls, split)

        def task_ids(self):
            return ["hard_full_pipeline"]

    report = check_task(Unseeded(), "hard_full_pipeline")
    assert report["status"] == "failed"
    assert report["checks"]["reset_deterministic"] is False
    assert report["checks"]["refusal_changes_nothing"] is True


def test_a_family_that_does_not_reproduce_fails_behind_the_registry() -> None:
    """The registry keeps the tasks it made; the checker's twin is made anew by the family,
    so a family whose instances differ from make to make is still caught."""
    fixed = FixedFamily(Settings().datasets_dir)

    class Reshuffling:
        name, instantiate = "fixed", "each make shuffles anew"

        def __init__(self) -> None:
            self.calls = 0

        def specs(self):
            return fixed.specs()

        def make(self, task_id, seed, split="train"):
            self.calls += 1
            return fixed.make(task_id, self.calls, split)

    report = check_task(TaskRegistry([Reshuffling()]), "hard_full_pipeline")
    assert report["status"] == "failed"
    assert report["checks"]["reset_deterministic"] is False
