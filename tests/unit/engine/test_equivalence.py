"""The engine's shortcuts change no byte: deferred DataFrames, reused grading views, caches.

Lazy operations derive a step's snapshot without pandas and defer its DataFrame
(`dataclean_env/table/deferred.py`); the grader reuses what a step left alone (`GoldFacts.keyed`);
parsed texts are cached (`values.parse_number`). Random action sequences (half of them the
task's own plan steps, so most are accepted) check every step against the slow way: the
snapshot read afresh from the built DataFrame, then graded, summarised and profiled from
scratch; and an episode whose tables are never built until the end against one whose
tables are built after every step. Resets of one instance share its Task and the opening
derived from it (`episode.opening_of`): no episode's steps may change what the next starts
from.
"""

from __future__ import annotations

import json
import math
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pandas as pd
import pytest

from dataclean_env.engine.episode import Episode, _servable
from dataclean_env.errors import EnvError, OperationFailed
from dataclean_env.operations import OpResult
from dataclean_env.operations.program import opened
from dataclean_env.schemas import Action, Reward
from dataclean_env.table.observation import table_summary
from dataclean_env.table.profiles import column_profiles
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.tasks import TaskRegistry
from tests.actions import random_action

FIXED = ["easy_dedup_rename", "medium_missing_dtype", "hard_full_pipeline", "expert_sales_pipeline"]
SEEDS = range(40)
STEPS = 14


def typed(snapshot: Snapshot) -> tuple[Any, ...]:
    """Everything a snapshot says, each cell with its type (30 and 30.0 differ in JSON)."""
    return (
        snapshot.columns,
        snapshot.n_rows,
        snapshot.kinds,
        snapshot.dtype_names,
        {c: str(d) for c, d in snapshot.dtypes.items()},
        {c: [(type(v).__name__, repr(v)) for v in snapshot.values[c]] for c in snapshot.columns},
    )


def task_for(registry: TaskRegistry, rng: random.Random) -> tuple[str, int | None]:
    if rng.random() < 0.75:
        return rng.choice(FIXED), None
    generated = [s.task_id for s in registry.specs() if s.family == "generated"]
    return rng.choice(generated), rng.choice([0, 1, 2])


def actions(rng: random.Random, episode: Episode) -> list[dict[str, Any]]:
    plan = opened(episode.task.reference_plan or [])
    chosen = []
    columns = list(episode.snapshot.columns)
    for _ in range(STEPS):
        roll = rng.random()
        if plan and roll < 0.5:
            chosen.append(rng.choice(plan))
        elif roll < 0.6:  # two columns of one kind swap names: other values under a name
            kind = rng.choice(list(episode.snapshot.kinds.values()))
            alike = [c for c in columns if episode.snapshot.kinds[c] == kind]
            first, second = rng.sample(alike, 2) if len(alike) > 1 else rng.sample(columns, 2)
            mapping = {first: second, second: first}
            chosen.append({"operation": "rename_columns", "parameters": {"mapping": mapping}})
        else:
            chosen.append(random_action(rng, list(episode.snapshot.columns)))
    return chosen


def step(episode: Episode, action: dict[str, Any]) -> str:
    """The step's answer as the doors send it (or its refusal)."""
    try:
        parsed = Action(**action)
    except Exception:  # an action the doors would refuse before the engine
        return "not an action"
    try:
        return episode.step(parsed).model_dump_json()
    except EnvError as error:
        return episode.result(error).model_dump_json()


def assert_matches_fresh(episode: Episode) -> None:
    """The episode's snapshot, scores and observation equal those computed from scratch
    out of its DataFrame."""
    fresh = Snapshot.of(episode.table)
    assert typed(fresh) == typed(episode.snapshot)
    grader = episode.task.grader
    combined = grader.combine(grader.components(fresh), episode.history, episode.spec.max_steps)
    assert combined["total"] == episode.score  # full precision, not only the rounded reward
    observation = episode.observation()
    window = (observation.sample_offset, len(observation.sample_rows))
    summary = table_summary(fresh, window)
    for field in ("columns", "shape", "missing_values", "dtypes", "duplicate_count"):
        assert json.dumps(summary[field]) == json.dumps(getattr(observation, field)), field
    assert json.dumps(summary["sample_rows"]) == json.dumps(observation.sample_rows)
    assert json.dumps(column_profiles(fresh)) == json.dumps(observation.column_profiles)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_step_equals_its_table_read_afresh(registry: TaskRegistry, seed: int) -> None:
    rng = random.Random(seed)
    task_id, task_seed = task_for(registry, rng)
    episode = Episode(f"fresh-{seed}", registry.make(task_id, task_seed))
    assert_matches_fresh(episode)
    for action in actions(rng, episode):
        step(episode, action)
        assert_matches_fresh(episode)
        if episode.done:
            break


@pytest.mark.parametrize("seed", SEEDS)
def test_deferred_tables_give_the_bytes_of_tables_built_every_step(
    registry: TaskRegistry, seed: int
) -> None:
    rng = random.Random(1000 + seed)
    task_id, task_seed = task_for(registry, rng)
    lazy = Episode("same", registry.make(task_id, task_seed))
    eager = Episode("same", replace(lazy.task))  # shares no step with `lazy`
    for action in actions(rng, lazy):
        answer = step(lazy, action)
        assert step(eager, action) == answer, action
        eager.table  # noqa: B018  (built now: the next step starts from a built table)
        if lazy.done:
            break
    assert lazy.state().model_dump_json() == eager.state().model_dump_json()
    assert lazy.table.equals(eager.table)
    assert lazy.table.dtypes.to_dict() == eager.table.dtypes.to_dict()
    assert typed(Snapshot.of(lazy.table)) == typed(lazy.snapshot)


def test_the_reward_object_is_the_one_model_construct_builds_from_its_values(
    registry: TaskRegistry,
) -> None:
    episode = Episode("reward", registry.make("expert_sales_pipeline", None))
    for action in [None, *episode.task.reference_plan]:
        if action is not None:
            episode.step(Action(**action))
        given = {k: v for k, v in episode.reward.model_dump().items() if v is not None}
        plain = Reward.model_construct(**given)
        assert episode.reward.model_fields_set == plain.model_fields_set == set(given)
        assert episode.reward.__dict__ == plain.__dict__
        assert episode.reward.model_dump_json() == plain.model_dump_json()


def test_a_deferred_table_is_built_once_whoever_asks(registry: TaskRegistry) -> None:
    task = registry.make("hard_full_pipeline", None)
    episode = Episode("built", task)
    for action in task.reference_plan[:4]:  # dedup, fill, fix_dtype, outliers: all deferred
        episode.step(Action(**action))
    with ThreadPoolExecutor(4) as pool:
        tables = list(pool.map(lambda _: episode.table, range(8)))
    assert all(table is tables[0] for table in tables)
    assert typed(Snapshot.of(tables[0])) == typed(episode.snapshot)


@pytest.mark.parametrize("infinite", [math.inf, -math.inf])
def test_a_result_with_an_infinite_number_is_refused(infinite: float) -> None:
    table = pd.DataFrame({"id": [1, 2, 3], "x": [1.5, None, infinite]})
    with pytest.raises(OperationFailed, match="infinite values in 'x'"):
        _servable(OpResult(table, "made up"))
    finite = pd.DataFrame({"id": [1, 2, 3], "x": [1.5, None, 1e308]})
    assert _servable(OpResult(finite, "made up")).values["x"][2] == 1e308


def test_a_look_after_a_deferred_step_keeps_the_snapshot(registry: TaskRegistry) -> None:
    """show_rows (not lazy) builds the deferred table to run, and hands it back unchanged:
    the step must keep the episode's snapshot (and so every cache keyed by its lists)
    instead of reading the whole table again as if it had changed."""
    task = registry.make("rayyan", None)  # a real table: show_rows is allowed there
    episode = Episode("look", task)
    fill = {"strategy": "constant", "value": "x"}
    episode.step(Action(operation="fill_missing", parameters=fill))  # lazy: left unbuilt
    before = episode.snapshot
    episode.step(Action(operation="show_rows", parameters={"offset": 5, "limit": 3}))
    assert episode.snapshot is before


@pytest.mark.parametrize("seed", range(12))
def test_episodes_of_one_instance_share_its_opening_and_never_change_it(
    registry: TaskRegistry, seed: int
) -> None:
    rng = random.Random(2000 + seed)
    task_id, task_seed = task_for(registry, rng)
    task = registry.make(task_id, task_seed)
    assert registry.make(task_id, task_seed) is task  # the registry keeps the instance
    pristine = task.dirty.copy()
    first = Episode("same", task)
    opening = first.result().model_dump_json()
    for action in actions(rng, first):
        step(first, action)
        first.table  # noqa: B018  (built: pandas operations run on the episode's copy)
        if first.done:
            break
    # The task's table and the opening the next episode gets are as they were, and equal
    # those of a task that shares nothing with the episode that ran.
    assert task.dirty.equals(pristine)
    assert task.dirty.dtypes.to_dict() == pristine.dtypes.to_dict()
    again = Episode("same", task)
    unshared = Episode("same", replace(task, dirty=pristine))
    assert again.result().model_dump_json() == opening
    assert unshared.result().model_dump_json() == opening
    assert typed(again.snapshot) == typed(Snapshot.of(pristine))
