"""Steps remembered across episodes (`dataclean_env/engine/step_memory.py`) change no byte.

An episode that applies an action another episode of the same instance already applied to
the same table takes that step's result: its table is then the very same object. Its
answers must be the bytes of an episode that shares nothing (a task with its own opening),
its limits and phase rules must still apply, and what is remembered stays bounded.
"""

from __future__ import annotations

import gc
import random
import weakref
from dataclasses import replace

import pandas as pd
import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.engine.step_memory import StepMemory, Transition, weight
from dataclean_env.errors import PhaseOutOfOrder, TooLarge
from dataclean_env.operations import OpResult
from dataclean_env.operations.claims import AUDIT_PHASES
from dataclean_env.schemas import Action
from dataclean_env.table.limits import MAX_TABLE_CELLS, EngineLimits, TableBudget
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.tasks import TaskRegistry
from tests.unit.engine.test_equivalence import actions, step, task_for

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
    memory = StepMemory()
    first, again = Episode("same", task, memory=memory), Episode("same", task, memory=memory)
    unshared = Episode("same", replace(task), memory=memory)  # its own opening: nothing shared
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
    memory = StepMemory()
    roomy = Episode("roomy", task, memory=memory)
    roomy.step(fill)  # remembered
    text = sum(len(v) for vs in roomy.snapshot.values.values() for v in vs if isinstance(v, str))
    tight = EngineLimits(max_table_chars=text - 1)
    cramped = Episode("cramped", task, tight, memory)
    before = cramped.result().model_dump_json()
    with pytest.raises(TooLarge):
        cramped.step(fill)
    assert cramped.step_count == 0
    assert cramped.result(None).model_dump_json().replace('"refusals":1', '"refusals":0') == before


def test_a_remembered_step_still_needs_its_phase(registry: TaskRegistry) -> None:
    task = registry.make("audit_pipeline", 0)
    identify = Action(operation="identify", parameters={"cells": []})
    memory = StepMemory()
    ahead = Episode("ahead", task, memory=memory)
    ahead.step(Action(operation="audit", parameters={"categories": ["missing"]}))
    ahead.step(identify)  # remembered, after the audit phase
    fresh = Episode("fresh", task, memory=memory)
    assert fresh.snapshot is ahead.snapshot  # the same table, another history
    with pytest.raises(PhaseOutOfOrder):
        fresh.step(identify)


def test_only_steps_that_change_a_small_table_are_shared(registry: TaskRegistry) -> None:
    task = registry.make("hard_full_pipeline", 7)
    check = Action(operation="validate_schema", parameters={})
    dedup = Action(operation="remove_duplicates", parameters={})
    memory = StepMemory()
    first, second = Episode("first", task, memory=memory), Episode("second", task, memory=memory)
    first.step(check)  # changes nothing: not worth remembering
    assert len(memory) == 0
    first.step(dedup)
    second.step(dedup)  # the history differs (no check first): not read on unphased tasks
    assert second.snapshot is first.snapshot
    assert len(memory) == 1

    big = pd.DataFrame(
        {"id": range(MAX_TABLE_CELLS // 2 + 1), "x": ["a"] * (MAX_TABLE_CELLS // 2 + 1)}
    )
    large = replace(task, dirty=big)
    Episode("large", large, memory=memory).step(
        Action(operation="remove_duplicates", parameters={"subset": ["x"]})
    )
    assert len(memory) == 1  # a large opening: its steps are not kept


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

    memory = StepMemory()
    listed, tupled = Episode("same", task, memory=memory), Episode("same", task, memory=memory)
    assert '"error"' not in step(listed, tokens(["segment"]))  # accepted,
    assert len(memory) == 1  # and remembered
    answer = step(tupled, tokens(("segment",)))  # the same JSON text
    assert '"INVALID_PARAMETERS"' in answer  # refused, as it is when computed:
    assert answer == step(Episode("same", replace(task)), tokens(("segment",)))


class _Task:
    """Stands for the Task an entry was taken in."""


OWNER = _Task()


def _transition(rows: int, text: str = "") -> tuple[Snapshot, Transition]:
    table = pd.DataFrame({"n": range(rows), "t": [text] * rows})
    before, after = Snapshot.of(table), Snapshot.of(table)
    budget = TableBudget(EngineLimits(), after)
    result = OpResult(table, "made up", after)
    return before, Transition(
        weakref.ref(OWNER), before, result, after, {}, {}, None, budget, budget
    )


def test_what_is_remembered_is_bounded_by_bytes_and_entries() -> None:
    # 100 rows x 2 columns, before and after, and a 1-character parameter text:
    # 4,096 + 16 * 400 + 4 * 1 = 10,500 bytes an entry
    memory = StepMemory(max_weight=35_000, max_entries=100)
    steps = [_transition(100) for _ in range(5)]
    for n, (before, transition) in enumerate(steps):
        memory.remember((id(before), "op", str(n), ()), transition)
    assert (len(memory), memory.weight) == (3, 3 * 10_500)  # the two oldest went
    assert memory.get(OWNER, steps[0][0], (id(steps[0][0]), "op", "0", ())) is None
    newest = steps[4][0]
    assert memory.get(OWNER, newest, (id(newest), "op", "4", ())) is steps[4][1]
    assert memory.get(_Task(), newest, (id(newest), "op", "4", ())) is None

    # Text counts, 4 bytes a character (before and after): 100 cells of 250 characters
    wordy, transition = _transition(100, "x" * 250)
    assert weight((id(wordy), "op", "", ()), transition) == 10_496 + 4 * 2 * 25_000

    empty = StepMemory(max_weight=10**9, max_entries=100)
    before, transition = _transition(0)  # an empty table still weighs an entry's objects
    for n in range(150):
        empty.remember((id(before), "op", f"{n:03d}", ()), transition)
    assert (len(empty), empty.weight) == (100, 100 * (4_096 + 4 * 3))


def test_the_memory_keeps_no_task_alive(registry: TaskRegistry) -> None:
    task = replace(registry.make("hard_full_pipeline", None))  # kept by nothing but us
    memory = StepMemory()
    episode = Episode("gone", task, memory=memory)
    episode.step(Action(operation="remove_duplicates", parameters={}))
    assert len(memory) == 1
    alive = weakref.ref(task)
    del task, episode
    gc.collect()
    assert alive() is None


def test_only_phased_tasks_offer_the_operations_that_read_the_history(
    registry: TaskRegistry,
) -> None:
    """A remembered step's key holds the operations before it on phased tasks only: the
    phase operations are the ones that read them (`require_phase`)."""
    for spec in registry.specs():
        if set(AUDIT_PHASES) & set(spec.operations):
            assert spec.phases == AUDIT_PHASES, spec.task_id


def test_no_memory_computes_every_step_and_changes_no_byte(registry: TaskRegistry) -> None:
    """An episode given no memory (Settings.step_memory=False, DCE_STEP_MEMORY, or an
    in-process caller's default) takes no step over, and answers the bytes the memory would
    have given."""
    task = registry.make("hard_full_pipeline", 7)
    dedup = {"operation": "remove_duplicates", "parameters": {}}
    memory = StepMemory()
    remembered = step(Episode("on", task, memory=memory), dedup)
    assert len(memory) == 1
    first, second = Episode("on", task), Episode("on", task)
    assert step(first, dedup) == remembered
    assert step(second, dedup) == remembered
    assert second.snapshot is not first.snapshot  # computed again, not taken over
    assert len(memory) == 1  # and the memory was not asked or fed


def test_two_memories_share_nothing(registry: TaskRegistry) -> None:
    """Each owner's memory is its own: two apps (or trainers) in one process do not see
    each other's steps."""
    task = registry.make("hard_full_pipeline", 7)
    dedup = Action(operation="remove_duplicates", parameters={})
    mine, theirs = StepMemory(), StepMemory()
    first = Episode("first", task, memory=mine)
    first.step(dedup)
    other = Episode("other", task, memory=theirs)
    other.step(dedup)
    assert other.snapshot is not first.snapshot  # computed: `mine` was not consulted
    assert (len(mine), len(theirs)) == (1, 1)
    again = Episode("again", task, memory=mine)
    again.step(dedup)
    assert again.snapshot is first.snapshot
