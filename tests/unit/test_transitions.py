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
from dataclean_env.transitions import MAX_TABLE_CELLS, TRANSITIONS, Transition, Transitions
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


def test_only_steps_that_change_a_small_table_are_shared(registry: TaskRegistry) -> None:
    task = registry.make("hard_full_pipeline", 7)
    check = Action(operation="validate_schema", parameters={})
    dedup = Action(operation="remove_duplicates", parameters={})
    first, second = Episode("first", task), Episode("second", task)
    first.step(check)  # changes nothing: not worth remembering
    assert len(TRANSITIONS) == 0
    first.step(dedup)
    second.step(dedup)  # the history differs (no check first): not read on unphased tasks
    assert second.snapshot is first.snapshot
    assert len(TRANSITIONS) == 1

    big = pd.DataFrame(
        {"id": range(MAX_TABLE_CELLS // 2 + 1), "x": ["a"] * (MAX_TABLE_CELLS // 2 + 1)}
    )
    large = replace(task, dirty=big)
    Episode("large", large).step(
        Action(operation="remove_duplicates", parameters={"subset": ["x"]})
    )
    assert len(TRANSITIONS) == 1  # a large opening: its steps are not kept


def test_parameters_json_would_not_give_back_are_not_shared(registry: TaskRegistry) -> None:
    """A tuple inside an Any-typed parameter reads as a list in JSON: the operation may
    refuse one and take the other, so neither takes the other's step over."""
    task = registry.make("crm", 0)

    def tokens(columns: object) -> dict[str, object]:
        inner = {
            "operation": "replace_missing",
            "parameters": {"columns": columns, "tokens": ["?"]},
        }
        return {"operation": "program", "parameters": {"operations": [inner]}}

    listed, tupled = Episode("same", task), Episode("same", task)
    assert '"error"' not in step(listed, tokens(["segment"]))  # accepted,
    assert len(TRANSITIONS) == 1  # and remembered
    answer = step(tupled, tokens(("segment",)))  # the same JSON text
    assert '"INVALID_PARAMETERS"' in answer  # refused, as it is when computed:
    assert answer == step(Episode("same", replace(task)), tokens(("segment",)))


def _transition(rows: int, columns: int = 1) -> tuple[Snapshot, Transition]:
    table = pd.DataFrame({f"c{i}": range(rows) for i in range(columns)})
    before, after = Snapshot.of(table), Snapshot.of(table)
    result = OpResult(table, "made up", after)
    return before, Transition(None, before, result, after, {}, {}, None, None, None)


def test_what_is_remembered_is_bounded_by_weight_and_entries() -> None:
    memory = Transitions(max_weight=2_000, max_entries=100)
    steps = [_transition(300) for _ in range(5)]  # each weighs 1 + 300 + 300 + 0
    for n, (before, transition) in enumerate(steps):
        memory.remember((id(before), "op", str(n), ()), transition)
    assert (len(memory), memory.weight) == (3, 1803)  # the two oldest went
    assert memory.get(None, steps[0][0], (id(steps[0][0]), "op", "0", ())) is None
    newest = steps[4][0]
    assert memory.get(None, newest, (id(newest), "op", "4", ())) is steps[4][1]
    assert memory.get("another task", newest, (id(newest), "op", "4", ())) is None

    empty = Transitions(max_weight=10**9, max_entries=100)
    before, transition = _transition(0)  # an empty table still weighs 1
    for n in range(150):
        empty.remember((id(before), "op", str(n), ()), transition)
    assert (len(empty), empty.weight) == (100, 100)
    long_text = "x" * 8_000  # parameter text counts: 1,000 for 8,000 characters
    empty.remember((id(before), "op", long_text, ()), transition)
    assert empty.weight == 99 + 1_001
