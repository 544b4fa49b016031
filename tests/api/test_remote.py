"""`RemoteDataCleaningEnv` over a real server's /ws answers what `DataCleaningEnv` answers in
this process, byte for byte: the same `StepResult` JSON for the same task, seed and actions,
refusals (an operation the table cannot take, a malformed envelope, an unknown operation, a
step after the end) included, and the same state; so the runner's backends see the same
steps."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import pytest

from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.in_process import DataCleaningEnv
from dataclean_env.protocol import EnvProtocol
from dataclean_env.remote import RemoteDataCleaningEnv
from dataclean_env.runner.backends import LocalBackend, RemoteBackend, Step
from dataclean_env.schemas import Action
from dataclean_env.tasks import default_registry

Actions = list[Action | dict[str, Any]]
REFUSALS: Actions = [
    {"operation": "fill_missing", "parameters": {"column": "no_such_column"}},
    {"operation": "finish", "params": {}, "parameters": {}},  # malformed: the client keeps it
    {"operation": "no_such_operation"},
]
PLAN: Actions = [
    *REFUSALS,
    Action(operation="remove_duplicates"),
    {"operation": "query", "parameters": {"sql": "SELECT count(*) AS n FROM t"}},
    {"action": {"operation": "fill_missing", "parameters": {"strategy": "median"}}},
    {"operation": "finish"},
    {"operation": "remove_duplicates"},  # after the end
]
EPISODES: list[tuple[str, int, str, Actions]] = [
    ("full_pipeline", 3, "train", PLAN),
    ("crm", 2, "eval", [{"operation": "show_rows", "parameters": {"offset": 5}}, *REFUSALS]),
    ("rayyan", 1, "train", [{"operation": "query", "parameters": {"sql": "SELECT 1 AS one"}}]),
]


def play(env: EnvProtocol, task_id: str, seed: int, split: str, actions: Actions) -> list[str]:
    answers = [env.reset(seed, "same-episode", split, task_id)]
    answers += [env.step(action) for action in actions]
    return [answer.model_dump_json() for answer in answers] + [env.state().model_dump_json()]


@pytest.mark.parametrize(("task_id", "seed", "split", "actions"), EPISODES)
def test_remote_and_in_process_answers_are_the_same_bytes(
    live_server, task_id: str, seed: int, split: str, actions: Actions
) -> None:
    remote = RemoteDataCleaningEnv(live_server.url)
    try:
        assert isinstance(remote, EnvProtocol)
        local = play(DataCleaningEnv(), task_id, seed, split, actions)
        assert play(remote, task_id, seed, split, actions) == local
    finally:
        remote.close()
    codes = [
        (json.loads(answer).get("info") or {}).get("error", {}).get("code") for answer in local
    ]
    if actions is PLAN:
        assert codes == [
            None,
            "INVALID_PARAMETERS",
            "INVALID_ACTION",
            "UNKNOWN_OPERATION",
            None,
            None,
            None,
            None,
            "EPISODE_FINISHED",
            None,  # the state
        ]
        refused, malformed = json.loads(local[1]), json.loads(local[2])
        assert (refused["info"]["refusals"], malformed["info"]["refusals"]) == (1, 1)
        assert malformed["observation"]["message"] == (
            "Error (INVALID_ACTION): action: Value error, give the operation and its "
            "parameters once each"
        )
        assert json.loads(local[5])["observation"]["query_result"]["columns"] == ["n"]


def test_the_runners_backends_see_the_same_steps(live_server) -> None:
    key = EpisodeKey("full_pipeline", 4, "train")
    actions = [action for action in PLAN if isinstance(action, dict)]
    local, remote = LocalBackend(default_registry()), RemoteBackend(live_server.url)
    try:
        seen_local = [local.reset(key), *(local.step(action) for action in actions)]
        seen_remote = [remote.reset(key), *(remote.step(action) for action in actions)]
    finally:
        remote.close()
    # The runner names its local episodes; the server issues the remote ones' ids.
    local_id, remote_id = (
        seen_local[0].observation["episode_id"],
        seen_remote[0].observation["episode_id"],
    )
    assert (local_id, remote_id[:4]) == ("full_pipeline-train-4", "dce:")
    assert [anonymous(step, remote_id) for step in seen_remote] == [
        anonymous(step, local_id) for step in seen_local
    ]
    assert [step.error is not None for step in seen_local] == [
        False, True, True, True, False, False, False, True
    ]  # fmt: skip


def anonymous(step: Step, episode_id: str) -> str:
    return json.dumps(asdict(step)).replace(episode_id, "ID")
