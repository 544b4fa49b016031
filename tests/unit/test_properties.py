"""Randomised episodes: random (often invalid) actions on random tasks never break the engine.

No extra dependency: `random.Random(seed)` draws actions from every operation and alias, with
parameters that are sometimes right, sometimes of the wrong type, sometimes unknown.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

from dataclean_env.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.operations import alias_names, operation_names
from dataclean_env.schemas import Action
from dataclean_env.tasks import TaskRegistry
from tests.support import CLAIM_REWARD_FIELDS, PRESERVATION_FIELDS, REPAIR_FIELDS, REWARD_FIELDS

SEEDS = range(30)
SEQUENCES_PER_SEED = 4
STEPS = 12

STRATEGIES = ["mean", "median", "mode", "ffill", "bfill", "constant", "average", None]
DTYPES = ["auto", "int", "float", "str", "bool", "datetime", "decimal", 3, None]
VALUES = [0, 1.5, -1, "junk", "", True, "2024-01-31", "$1,200", [1], {"a": 1}, math.nan, None]
THRESHOLDS = [None, 0.1, 0.5, 1.0, 1.5, 2, 3.0, "2", 0, -1.0, 150.0, math.inf]
NEW_NAMES = ["x_junk", "", "   ", "y" * 70, " padded ", "Mixed Case", "id", "price", "a-b"]


def _column(rng: random.Random, columns: list[str]) -> Any:
    roll = rng.random()
    if roll < 0.7 and columns:
        return rng.choice(columns)
    if roll < 0.8:
        return "x_nope"
    if roll < 0.85:
        return 5
    return None


def _put(params: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        params[key] = value


def random_action(rng: random.Random, columns: list[str]) -> dict[str, Any]:
    names = operation_names() + alias_names() + ["no_such_op"]
    weights = [0.3 if n == "finish" else 1.0 for n in names]
    name = rng.choices(names, weights)[0]
    params: dict[str, Any] = {}
    if name == "remove_duplicates":
        choice = rng.randrange(5)
        if choice == 1 and columns:
            params["subset"] = rng.sample(columns, rng.randint(1, min(2, len(columns))))
        elif choice == 2:
            params["subset"] = rng.choice(["a", [], ["x_nope"], [1]])
        elif choice == 3:
            params["keep"] = "first"
    elif name.startswith("fill_missing"):
        if name == "fill_missing" or rng.random() < 0.2:
            _put(params, "strategy", rng.choice(STRATEGIES))
        _put(params, "column", _column(rng, columns))
        constant = name == "fill_missing_constant" or params.get("strategy") == "constant"
        if rng.random() < (0.9 if constant else 0.1):
            _put(params, "value", rng.choice(VALUES))
    elif name == "fix_dtype":
        _put(params, "dtype", rng.choice(DTYPES))
        _put(params, "column", _column(rng, columns))
    elif name == "remove_outliers":
        _put(params, "method", rng.choice(["iqr", "zscore", "mad", None]))
        _put(params, "column", _column(rng, columns))
        _put(params, "threshold", rng.choice(THRESHOLDS))
    elif name == "rename_columns":
        choice = rng.randrange(4)
        if choice == 1 and columns:
            new = rng.choice([*NEW_NAMES, *columns])
            params["mapping"] = {rng.choice(columns): new}
        elif choice == 2:
            params["mapping"] = rng.choice(["a", {"x_nope": "y"}, {}, None])
    if rng.random() < 0.05:
        params["unexpected"] = 1
    return {"operation": name, "parameters": params}


def check_reward(episode: Episode) -> None:
    reward = episode.reward.model_dump()
    expected = {"fixed": REWARD_FIELDS, "custom": REPAIR_FIELDS}.get(
        episode.spec.family, PRESERVATION_FIELDS
    )
    expected = CLAIM_REWARD_FIELDS.get(episode.spec.kind, expected)
    assert list(reward) == expected
    for field, value in reward.items():
        assert 0.0001 <= value <= 0.9999, (field, value)
        assert round(value, 4) == value, (field, value)
    assert reward["total"] <= 0.9999


def check_table_and_observation(episode: Episode) -> None:
    columns = list(episode.table.columns)
    assert all(isinstance(c, str) for c in columns), columns
    assert len(set(columns)) == len(columns), columns
    observation = episode.observation()
    assert observation.columns == columns
    assert observation.shape == [len(episode.table), len(columns)]
    assert observation.step == len(episode.history)
    json.dumps(observation.model_dump(), allow_nan=False)
    json.dumps(episode.result().model_dump(), allow_nan=False)
    json.dumps(episode.state().model_dump(), allow_nan=False)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_actions_keep_the_engine_consistent(registry: TaskRegistry, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(SEQUENCES_PER_SEED):
        task_id = rng.choice(registry.task_ids())
        task_seed = rng.choice([None, 0, 1, 2, 3])
        episode = Episode(f"prop-{seed}", registry.make(task_id, task_seed))
        check_reward(episode)
        check_table_and_observation(episode)
        for _ in range(STEPS):
            action = random_action(rng, list(episode.table.columns))
            table = episode.table.copy(deep=True)
            reward = episode.reward.model_dump()
            steps = episode.step_count
            history = list(episode.history)
            was_done = episode.done
            try:
                result = episode.step(Action(**action))
            except EnvError as error:
                # A refused step changes nothing.
                assert isinstance(error.code, str) and error.code
                assert episode.table.equals(table), action
                assert episode.reward.model_dump() == reward, action
                assert episode.step_count == steps
                assert list(episode.history) == history
                # ... except that the refusal allowance (the step budget) can run out.
                assert episode.done == was_done or (
                    episode.end_reason == "refusal_budget"
                    and episode.refusals == episode.spec.max_steps
                )
                if was_done:
                    assert error.code == "EPISODE_FINISHED"
            else:
                assert not was_done
                assert episode.step_count == steps + 1
                assert result.reward == episode.reward
                assert result.done == episode.done
                json.dumps(result.model_dump(), allow_nan=False)
            check_reward(episode)
            check_table_and_observation(episode)
            if was_done:
                break  # the refusal of a finished episode is checked; start another one
