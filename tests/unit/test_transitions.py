"""Steps remembered across episodes (`dataclean_env/transitions.py`) change no byte.

An episode that applies an action another episode of the same instance already applied to
the same table takes that step's result: its table is then the very same object. Its
answers must be the bytes of an episode that shares nothing (a task with its own opening),
its limits and phase rules must still apply, and what is remembered stays bounded.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pandas as pd
import pytest

from dataclean_env.episode import Episode
from dataclean_env.errors import PhaseOutOfOrder, TooLarge
from dataclean_env.limits import EngineLimits
from dataclean_env.operations import OpResult
from dataclean_env.schemas import Action
from dataclean_env.snapshot import Snapshot
from dataclean_env.tasks import TaskRegistry
from dataclean_env.transitions import MAX_TABLE_CELLS, Transition, Transitions
from tests.unit.test_engine_equivalence import actions, step, task_for

CLAIMS = ["error_detection", "standardisation", "audit_pipeline"]


@pytest.mark.parametrize("seed", range(24))
def test_a_step_taken_again_gives_the_bytes_of_one_computed_afresh(
    registry: TaskRegistry, seed: int
) -> None:
    rng = random.Random(3000 + seed)
    if seed % 4 == 3:
        task_id, task_seed = rng.choice(CLAIMS), rng.choice([0, 1])
    else:
        task_id, task_seed = task_for(registry, rng)
    task = registry.make(task_id, task_seed)
    first, again = Episode("same", task), Episode("same", task)
    unshared = Episode("same", replace(task))  # its own opening: nothing to take over
    shared = 0
    for action in actions(rng, first):
        answer = step(first, action)
        assert step(again, action) == answer, action
        assert step(unshared, action) == answer, action
        shared += again.snapshot is first.snapshot is not unshared.snapshot
        if first.done:
            break
    assert shared > 0  # the second episode did take the first one's tables
    assert again.state().model_dump_json() == unshared.state().model_dump_json()
    assert again.table.equals(unshared.table)


def test_a_remembered_step_is_still_held_to_the_episodes_own_limits(
    registry: TaskRegistry,
) -> None:
    task = registry.make("medium_missing_dtype", None)
    long = {"strategy": "constant", "value": "x" * 90, "column": "region"}
    fill = Action(operation="fill_missing", parameters=long)
    roomy = Episode("roomy", task)
    roomy.step(fill)  # remembered
    text = sum(len(v) for vs in roomy.snapshot.values.values() for v in vs if isinstance(v, str))
    tight = EngineLimits(max_table_chars=text - 1)
    cramped = Episode("cramped", task, tight)
    before = cramped.result().model_dump_json()
    with pytest.raises(TooLarge):
        cramped.step(fill)
    assert cramped.step_count == 0
    assert cramped.result(None).model_dump_json().replace('"refusals":1', '"refusals":0') == before


def test_a_remembered_step_still_needs_its_phase(registry: TaskRegistry) -> None:
    task = registry.make("audit_pipeline", 0)
    identify = Action(operation="identify", parameters={"cells": []})
    ahead = Episode("ahead", task)
    ahead.step(Action(operation="audit", parameters={"categories": ["missing"]}))
    ahead.step(identify)  # remembered, after the audit phase
    fresh = Episode("fresh", task)
    assert fresh.snapshot is ahead.snapshot  # the same table, another history
    with pytest.raises(PhaseOutOfOrder):
        fresh.step(identify)


def test_blind_episodes_neither_take_steps_over_nor_leave_them(registry: TaskRegistry) -> None:
    task = registry.make("hard_full_pipeline", 7)
    dedup = Action(operation="remove_duplicates", parameters={})
    blind = Episode("blind", task)
    blind.blind = True
    blind.step(dedup)
    seeing = Episode("seeing", task)
    seeing.step(dedup)
    assert seeing.snapshot is not blind.snapshot  # computed again: nothing was left
    late = Episode("late", task)
    late.blind = True
    late.step(dedup)
    assert late.snapshot is not seeing.snapshot  # computed again: nothing taken over
    again = Episode("again", task)
    again.step(dedup)
    assert again.snapshot is seeing.snapshot  # while episodes that see their score share


def _transition(rows: int, columns: int = 1) -> tuple[Snapshot, Transition]:
    table = pd.DataFrame({f"c{i}": range(rows) for i in range(columns)})
    before, after = Snapshot.of(table), Snapshot.of(table)
    result = OpResult(table, "made up", after)
    return before, Transition(None, before, result, after, {}, {}, None, None, None)


def test_what_is_remembered_is_bounded_by_cells() -> None:
    memory = Transitions(max_cells=1_000)
    steps = [_transition(300) for _ in range(5)]
    for n, (before, transition) in enumerate(steps):
        memory.remember((id(before), "op", str(n), ()), transition)
    assert len(memory) == 3  # 900 cells: the two oldest went
    assert memory.get(None, steps[0][0], (id(steps[0][0]), "op", "0", ())) is None
    newest = steps[4][0]
    assert memory.get(None, newest, (id(newest), "op", "4", ())) is steps[4][1]
    assert memory.get("another task", newest, (id(newest), "op", "4", ())) is None

    large, transition = _transition(MAX_TABLE_CELLS // 2 + 1, columns=2)
    memory.remember((id(large), "op", "large", ()), transition)  # too large to remember
    assert memory.get(None, large, (id(large), "op", "large", ())) is None
    assert len(memory) == 3
