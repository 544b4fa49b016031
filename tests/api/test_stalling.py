"""Issue 10, section 3: no reward for stalling, rewards at full precision, and one text for a
bad action at every door. Each test reproduces a measured defect of the earlier server."""

from __future__ import annotations

from fastapi.testclient import TestClient

from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.in_process import DataCleaningEnv
from dataclean_env.models import CleaningAction
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.server.app import create_app
from dataclean_env.server.openenv.data_cleaning_environment import DataCleaningEnvironment
from dataclean_env.settings import Settings


def test_invalid_actions_earn_nothing_in_absolute_mode(registry) -> None:
    # Before: each refused action answered the current score as its reward, so 100 invalid
    # actions summed to 39.1 on this instance and the episode never ended.
    env = DataCleaningEnvironment(registry)
    env.reset(task_id="crm", seed=3, split="eval", reward_mode="absolute")
    rewards = [env.step(CleaningAction(operation="no_such_op")).reward for _ in range(100)]
    assert sum(rewards) == 0.0
    assert env.episode.done and env.episode.end_reason == "refusal_budget"
    assert env.episode.refusals == env.episode.spec.max_steps == 30
    late = env.step(CleaningAction(operation="finish"))
    assert (late.reward, late.info["error"]["code"]) == (0.0, "EPISODE_FINISHED")


def test_termination_and_truncation_are_told_apart(registry) -> None:
    env = DataCleaningEnv("easy_dedup_rename", registry=registry)
    env.reset()
    finished = env.step({"operation": "finish"})
    assert (finished.info["terminated"], finished.info["truncated"]) == (True, False)
    assert finished.info["end_reason"] == "finished"
    env.reset()
    for _ in range(10):
        last = env.step({"operation": "validate_schema"})
    assert (last.done, last.info["terminated"], last.info["truncated"]) == (True, False, True)
    assert last.info["end_reason"] == "step_budget"


def test_scores_keep_full_precision_and_exact_says_when_gold_is_reached(registry, metadata) -> None:
    env = DataCleaningEnvironment(registry)
    env.reset(task_id="medium_missing_dtype")
    solution = metadata["medium_missing_dtype"]["solution"]
    seen = []
    for action in solution:
        result = env.step(CleaningAction(**action))
        seen.append((result.score, result.info["exact"]))
    # The reward object keeps the contract's 4 places; the score does not round.
    partial = [score for score, _ in seen if score != round(score, 4)]
    assert partial, seen
    assert seen[-1] == (0.9999, True)
    assert seen[0][1] is False


def test_the_same_bad_action_reads_the_same_at_every_door(registry) -> None:
    bad = {"operation": "finish", "bogus": 1}
    expected = "bogus: Extra inputs are not permitted"

    in_process = DataCleaningEnv("easy_dedup_rename", registry=registry)
    in_process.reset()
    assert in_process.step(bad).info["error"]["detail"] == expected

    runner = LocalBackend(registry)
    runner.reset(EpisodeKey("easy_dedup_rename", None, "train"))
    assert runner.step(bad).error == expected

    with TestClient(create_app(Settings(), registry)) as client:
        answer = client.post("/step/easy_dedup_rename", json=bad)
    assert (answer.status_code, answer.json()["detail"]) == (422, expected)


def test_a_blind_real_table_shows_no_repair_figures_in_state_before_it_ends() -> None:
    from dataclean_env.tasks import default_registry as registry_of

    env = DataCleaningEnvironment(registry_of())
    for mode, hidden in (("absolute", False), ("hidden", True)):
        env.reset(task_id="rayyan", reward_mode=mode)
        env.step(CleaningAction(operation="show_rows", parameters={}))
        state = env.state
        assert (state.repair is None) is hidden and (state.reward is None) is hidden, mode
