"""The step as one pure function (`episode.next_step`), committed by `Episode.step`.

`next_step` computes what an action does (resolve -> check -> apply -> snapshot -> profile
-> grade -> observe) and changes nothing it is given; a refusal is raised before anything
changes; and a step the memory holds commits the bytes of the step computed afresh.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from dataclean_env.engine.episode import Episode, next_step
from dataclean_env.engine.step_memory import StepMemory
from dataclean_env.errors import (
    EnvError,
    LabelBudgetExceeded,
    OperationFailed,
    OperationNotAllowed,
    TooLarge,
    UnknownOperation,
)
from dataclean_env.schemas import Action
from dataclean_env.table.limits import EngineLimits
from dataclean_env.tasks import TaskRegistry

pytestmark = pytest.mark.unit

FIXED = ["easy_dedup_rename", "medium_missing_dtype", "hard_full_pipeline", "expert_sales_pipeline"]


def fingerprint(episode: Episode) -> tuple[Any, ...]:
    """Everything the episode holds: each attribute by identity (the objects are held, so
    no id is reused), its growing lists by content, and what a client can read of it."""
    attributes = dict(vars(episode))
    return (
        attributes,
        {name: id(value) for name, value in attributes.items()},
        list(episode.history),
        list(episode.messages),
        episode.result().json_bytes(),
        episode.state().model_dump_json(),
    )


def unchanged(before: tuple[Any, ...], episode: Episode) -> bool:
    return before[1:] == fingerprint(episode)[1:]


@pytest.mark.parametrize("task_id", FIXED)
def test_computing_a_step_leaves_the_episode_as_it_was(
    registry: TaskRegistry, metadata: dict[str, dict[str, Any]], task_id: str
) -> None:
    task = registry.make(task_id, None)
    probed, control = Episode("same", task), Episode("same", task)
    for action in (Action(**a) for a in metadata[task_id]["solution"]):
        before = fingerprint(probed)
        step = next_step(probed, action)
        assert unchanged(before, probed), action
        assert step.record.operation == action.operation  # the plan names canonical ones
        # What was computed is the step: committed, it answers the bytes of a step taken.
        assert probed._commit(step).json_bytes() == control.step(action).json_bytes()
    assert probed.done and probed.score == control.score


def _label_rows(registry: TaskRegistry, memory: StepMemory) -> tuple[Episode, Action]:
    episode = Episode("labels", registry.make("rayyan-labelled", 0), memory=memory)
    episode.label_budget = 1
    first = episode.snapshot.values[episode.snapshot.columns[0]][:2]
    return episode, Action(operation="label", parameters={"row_ids": list(first)})


def _long_fill(registry: TaskRegistry, memory: StepMemory) -> tuple[Episode, Action]:
    """A fill the table's text limit admits only with one character more."""
    task = registry.make("medium_missing_dtype", None)
    long = {"strategy": "constant", "value": "x" * 90, "column": "region"}
    fill = Action(operation="fill_missing", parameters=long)
    filled = Episode("roomy", task)
    filled.step(fill)
    values = filled.snapshot.values.values()
    text = sum(len(v) for vs in values for v in vs if isinstance(v, str))
    return Episode("cramped", task, EngineLimits(max_table_chars=text - 1), memory), fill


# (stage, the episode and action, the refusal and the start of its message)
REFUSALS = [
    (
        "resolve",
        lambda r, m: (
            Episode("e", r.make("fix_types", 0, "eval"), memory=m),
            Action(operation="no_such_op"),
        ),
        UnknownOperation,
        "unknown operation 'no_such_op'; this task's operations: fix_dtype,",
    ),
    (
        "check: the task's operations",
        lambda r, m: (
            Episode("e", r.make("fix_types", 0, "eval"), memory=m),
            Action(operation="rename_columns", parameters={"mapping": {}}),
        ),
        OperationNotAllowed,
        "operation 'rename_columns' is not available in task 'fix_types'; this task's operations: fix_dtype,",
    ),
    (
        "check: the parameters' size",
        lambda r, m: (
            Episode("e", r.make("hard_full_pipeline", None), EngineLimits(max_action_bytes=10), m),
            Action(operation="fill_missing", parameters={"strategy": "median"}),
        ),
        TooLarge,
        "the parameters take 22 bytes as JSON; at most 10",
    ),
    (
        "check: the label budget",
        _label_rows,
        LabelBudgetExceeded,
        "labelling these rows would use 2 labels; the budget is 1 and 0 are used",
    ),
    (
        "apply",
        lambda r, m: (
            Episode("e", r.make("fix_types", 0, "eval"), memory=m),
            Action(operation="fix_dtype", parameters={"column": "unit_price", "dtype": "float"}),
        ),
        OperationFailed,
        "column 'unit_price' has values that are not numbers: 'CHF 527.07', ",
    ),
    (
        "snapshot: the table's text limit",
        _long_fill,
        TooLarge,
        "the table would hold 1124 characters of text; at most 1123",
    ),
]


@pytest.mark.parametrize(
    ("make", "refusal", "message"),
    [case[1:] for case in REFUSALS],
    ids=[case[0] for case in REFUSALS],
)
def test_each_refusal_is_raised_before_anything_changes(
    registry: TaskRegistry, make: Any, refusal: type[EnvError], message: str
) -> None:
    memory = StepMemory()  # were the step computed, the memory would hold it
    episode, action = make(registry, memory)
    before = fingerprint(episode)
    with pytest.raises(refusal) as raised:
        next_step(episode, action)
    assert raised.value.detail.startswith(message), raised.value.detail
    assert unchanged(before, episode)
    assert len(memory) == 0


def test_a_remembered_step_and_a_computed_one_commit_the_same_bytes(
    registry: TaskRegistry,
) -> None:
    task = registry.make("hard_full_pipeline", 7)
    dedup = Action(operation="remove_duplicates", parameters={})
    memory = StepMemory()
    first, second = Episode("same", task, memory=memory), Episode("same", task, memory=memory)
    computed = next_step(first, dedup)
    assert len(memory) == 1  # remembered as it was computed
    taken = next_step(second, dedup)
    # the memory's table, profiles and scores, not computed again
    assert taken.committed.snapshot is computed.committed.snapshot
    assert taken.committed.scores is computed.committed.scores
    unshared = Episode("same", replace(task))  # its own opening: nothing to take over
    expected = unshared.step(dedup).json_bytes()
    assert first._commit(computed).json_bytes() == expected
    assert second._commit(taken).json_bytes() == expected
    assert second.snapshot is first.snapshot is not unshared.snapshot


def test_a_committed_read_that_a_commit_overlapped_is_read_again(registry: TaskRegistry) -> None:
    episode = Episode("read", registry.make("easy_dedup_rename", None))
    seen: list[int] = []

    def read() -> int:
        seen.append(episode.step_count)
        if len(seen) == 1:  # another thread's step commits while this read runs
            episode.step(Action(operation="remove_duplicates"))
        return episode.step_count

    assert episode.read_committed(read) == 1
    assert seen == [0, 1]


def test_a_committed_read_that_a_refusal_overlapped_is_read_again(registry: TaskRegistry) -> None:
    episode = Episode("read", registry.make("easy_dedup_rename", None))
    seen: list[int] = []

    def read() -> int:
        seen.append(episode.refusals)
        if len(seen) == 1:
            with pytest.raises(UnknownOperation):
                episode.step(Action(operation="no_such_operation"))
        return episode.refusals

    assert episode.read_committed(read) == 1
    assert seen == [0, 1]
