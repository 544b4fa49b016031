"""Randomised episodes: random (often invalid) actions on random tasks never break the engine.

No extra dependency: `random.Random(seed)` draws actions from every operation and alias, with
parameters that are sometimes right, sometimes of the wrong type, sometimes unknown.
"""

from __future__ import annotations

import json
import random

import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.schemas import Action
from dataclean_env.tasks import TaskRegistry
from tests.actions import random_action
from tests.support import CLAIM_REWARD_FIELDS, PRESERVATION_FIELDS, REPAIR_FIELDS, REWARD_FIELDS

SEEDS = range(30)
SEQUENCES_PER_SEED = 4
STEPS = 12


def check_reward(episode: Episode) -> None:
    reward = episode.reward.model_dump()
    expected = {"fixed": REWARD_FIELDS, "custom": REPAIR_FIELDS, "corpus": REPAIR_FIELDS}.get(
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
