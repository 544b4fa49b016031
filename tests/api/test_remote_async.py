"""`AsyncRemoteDataCleaningEnv` answers what the sync client answers, byte for byte; and a
GRPO group sharing one instance (same task, seed and split) plays one episode per rollout,
concurrently, against a real server's /ws."""

from __future__ import annotations

import asyncio
from typing import Any

from dataclean_env.in_process import DataCleaningEnv
from dataclean_env.remote import AsyncRemoteDataCleaningEnv
from dataclean_env.schemas import StepResult
from tests.api.test_remote import EPISODES, Actions, play

GROUP = 8
PATIENT = 300.0  # seconds to connect: on a busy machine a wait is not a failure
INSTANCE = {"task_id": "full_pipeline", "seed": 3, "split": "train"}


async def play_async(url: str, task_id: str, seed: int, split: str, actions: Actions) -> list[str]:
    async with AsyncRemoteDataCleaningEnv(url, connect_timeout_s=PATIENT) as env:
        answers = [await env.reset(seed, "same-episode", split, task_id)]
        answers += [await env.step(action) for action in actions]
        state = await env.state()
    return [answer.model_dump_json() for answer in answers] + [state.model_dump_json()]


def test_the_async_client_answers_what_the_engine_answers(live_server) -> None:
    for task_id, seed, split, actions in EPISODES:
        local = play(DataCleaningEnv(), task_id, seed, split, actions)
        assert asyncio.run(play_async(live_server.url, task_id, seed, split, actions)) == local


def without_id(result: StepResult) -> dict[str, Any]:
    answer = result.model_dump(mode="json")
    answer["observation"].pop("episode_id")
    answer["info"].pop("episode_id")
    return answer


async def group(url: str) -> tuple[list[StepResult], list[StepResult], list[int]]:
    """GROUP rollouts of one instance at once; the even ones dedupe first, all finish."""
    envs = [AsyncRemoteDataCleaningEnv(url, connect_timeout_s=PATIENT) for _ in range(GROUP)]
    await asyncio.gather(*(env.__aenter__() for env in envs))
    try:
        starts = await asyncio.gather(*(env.reset(**INSTANCE) for env in envs))

        async def rollout(n: int, env: AsyncRemoteDataCleaningEnv) -> StepResult:
            if n % 2 == 0:
                await env.step({"operation": "remove_duplicates"})
            return await env.step({"operation": "finish"})

        ends = await asyncio.gather(*(rollout(n, env) for n, env in enumerate(envs)))
        steps = [(await env.state()).step_count for env in envs]
    finally:
        await asyncio.gather(*(env.close() for env in envs))
    return list(starts), list(ends), steps


def test_a_grpo_group_shares_one_instance_each_rollout_its_own_episode(live_server) -> None:
    starts, ends, steps = asyncio.run(group(live_server.url))
    assert len({start.observation.episode_id for start in starts}) == GROUP  # one each
    assert all(without_id(start) == without_id(starts[0]) for start in starts)  # one table
    assert steps == [2, 1] * (GROUP // 2)  # nobody's steps reached another's episode
    # Same actions, same rewards; the two plans of the group score apart.
    assert all(without_id(end) == without_id(ends[n % 2]) for n, end in enumerate(ends))
    assert ends[0].reward.total != ends[1].reward.total
