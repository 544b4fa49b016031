"""What a door hands a Python caller is the caller's own: editing one episode's observation
or state changes no other episode's next answer, with or without a step memory."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.engine.doors import attempt, start_episode
from dataclean_env.engine.step_memory import StepMemory
from dataclean_env.in_process import DataCleaningEnv
from dataclean_env.models import CleaningAction
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.server.openenv.data_cleaning_environment import DataCleaningEnvironment

TASK = "hard_full_pipeline"
DEDUP = {"operation": "remove_duplicates", "parameters": {}}


def vandalise(value: Any) -> None:
    """Empty every list and dict reachable from `value`, in place."""
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            vandalise(getattr(value, name, None))
    elif isinstance(value, dict):
        for item in list(value.values()):
            vandalise(item)
        value.clear()
    elif isinstance(value, list):
        for item in value:
            vandalise(item)
        value.clear()


def expected(registry) -> tuple[str, str]:
    """The opening's and the step's answers, computed by an episode that shares nothing."""
    episode = start_episode(registry, TASK, 7, episode_id="x")
    opening = episode.result().observation.model_dump_json()
    return opening, attempt(episode, DEDUP).observation.model_dump_json()


@pytest.mark.parametrize("memory", [None, StepMemory()], ids=["no memory", "memory"])
def test_the_in_process_environment_hands_out_its_own_objects(registry, memory) -> None:
    want = expected(registry)
    first = DataCleaningEnv(TASK, seed=7, registry=registry, memory=memory)
    vandalise(first.reset(episode_id="x"))
    vandalise(first.step(DEDUP))
    vandalise(first.state())
    second = DataCleaningEnv(TASK, seed=7, registry=registry, memory=memory)
    opening = second.reset(episode_id="x").observation.model_dump_json()
    assert (opening, second.step(DEDUP).observation.model_dump_json()) == want


@pytest.mark.parametrize("memory", [None, StepMemory()], ids=["no memory", "memory"])
def test_the_runners_local_backend_hands_out_its_own_objects(registry, memory) -> None:
    key = EpisodeKey(TASK, 7, "train")
    first = LocalBackend(registry, memory)
    for step in (first.reset(key), first.step(DEDUP)):
        vandalise(step.observation), vandalise(step.components), vandalise(step.repair)
    second = LocalBackend(registry, memory)
    fresh = LocalBackend(registry)
    assert second.reset(key).observation == fresh.reset(key).observation
    assert second.step(DEDUP).observation == fresh.step(DEDUP).observation


@pytest.mark.parametrize("memory", [None, StepMemory()], ids=["no memory", "memory"])
def test_the_openenv_environment_hands_out_its_own_objects(registry, memory) -> None:
    def answers(env: DataCleaningEnvironment) -> list[str]:
        seen = [env.reset(seed=7, episode_id="x", task_id=TASK, reward_mode="absolute")]
        seen.append(env.step(CleaningAction(**DEDUP)))
        return [o.model_dump_json() for o in seen]

    first = DataCleaningEnvironment(registry, memory=memory)
    first.reset(seed=7, episode_id="x", task_id=TASK)
    vandalise(first.reset(seed=7, episode_id="x", task_id=TASK))
    vandalise(first.step(CleaningAction(**DEDUP)))
    vandalise(first.state)
    assert answers(DataCleaningEnvironment(registry, memory=memory)) == answers(
        DataCleaningEnvironment(registry)
    )


def test_two_apps_in_one_process_keep_their_own_step_memory(registry) -> None:
    """Each app's store makes its memory from its own settings: one app with the memory off
    neither switches off nor reads another's."""
    from fastapi.testclient import TestClient

    from dataclean_env.server.app import create_app
    from dataclean_env.settings import Settings

    def snapshots(app) -> list[object]:
        seen = []
        with TestClient(app) as client:
            for name in ("a", "b"):
                client.post("/reset", json={"task_id": TASK, "seed": 7, "episode_id": name})
                step = client.post("/step", json={"episode_id": name, "action": DEDUP})
                assert step.status_code == 200, step.text
                seen.append(app.state.store.get(name).snapshot)
        return seen

    on, off, also_on = (
        create_app(Settings(step_memory=flag), registry) for flag in (True, False, True)
    )
    assert off.state.store.memory is None
    assert on.state.store.memory is not also_on.state.store.memory
    first, second = snapshots(on)
    assert second is first  # taken over from the app's own memory
    first, second = snapshots(off)  # made after `on`: it did not switch `on` off
    assert second is not first
    assert snapshots(also_on)[0] is not snapshots(on)[0]  # nothing read from `on`
