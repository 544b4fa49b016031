"""The in-process door: `from environment import DataCleaningEnv`, `from models import Action`."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel

from dataclean_env.errors import UnknownTask
from dataclean_env.settings import PROJECT_ROOT
from environment import DataCleaningEnv
from models import Action
from tests.support import TABLE_FIELDS, TASK_IDS


def table_view(result) -> dict[str, Any]:
    observation = result.observation.model_dump(mode="json")
    return {field: observation[field] for field in TABLE_FIELDS}


def plan_actions(metadata: dict[str, dict], task_id: str) -> list[Action]:
    return [
        Action(operation=step["operation"], parameters=step["parameters"])
        for step in metadata[task_id]["solution"]
    ]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reset_returns_the_contract_shape(task_id: str, metadata: dict[str, dict]) -> None:
    result = DataCleaningEnv(task_id=task_id).reset()
    assert isinstance(result.observation, BaseModel)
    dumped = result.observation.model_dump()
    json.dumps(dumped)  # JSON-serialisable as is
    assert dumped["task_id"] == task_id
    assert dumped["step"] == 0
    assert dumped["steps_remaining"] == metadata[task_id]["max_steps"]
    assert dumped["episode_id"] == result.info["episode_id"]
    assert result.reward.total == 0.0001
    assert result.done is False
    assert isinstance(result.info, dict)
    assert "error" not in result.info


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_solution_scores_the_ceiling(task_id: str, metadata: dict[str, dict]) -> None:
    env = DataCleaningEnv(task_id=task_id)
    env.reset()
    actions = plan_actions(metadata, task_id)
    for number, action in enumerate(actions, start=1):
        result = env.step(action)
        assert "error" not in result.info, result.info
        assert result.observation.step == number
        assert result.done is (action.operation == "finish")
    assert actions[-1].operation == "finish"
    assert result.reward.total == 0.9999
    json.dumps(result.observation.model_dump())
    state = env.state()
    assert state.done is True
    assert state.step_count == len(actions)
    assert [h.operation for h in state.history] == [a.operation for a in actions]


def test_plain_dict_actions_work_like_action(metadata: dict[str, dict]) -> None:
    task_id = "hard_full_pipeline"
    with_models, with_dicts = DataCleaningEnv(task_id=task_id), DataCleaningEnv(task_id=task_id)
    with_models.reset(episode_id="same")
    with_dicts.reset(episode_id="same")
    for step in metadata[task_id]["solution"]:
        a = with_models.step(Action(**step))
        b = with_dicts.step(dict(step))
        assert a.model_dump() == b.model_dump()
    assert b.reward.total == 0.9999
    spelled = DataCleaningEnv(task_id="medium_missing_dtype")
    spelled.reset()
    result = spelled.step({"name": "fill_missing", "params": {"strategy": "mean"}})
    assert result.info["last_action"] == {
        "operation": "fill_missing",
        "parameters": {"strategy": "mean"},
    }


def test_action_model_is_the_envelope() -> None:
    assert Action(operation="finish").parameters == {}
    envelope = Action(operation="fill_missing", parameters={"strategy": "mean"})
    assert Action.model_validate({"name": "fill_missing", "params": {"strategy": "mean"}}) == (
        envelope
    )
    assert Action.model_validate(
        {"action_type": "fill_missing", "parameters": {"strategy": "mean"}}
    ) == (envelope)
    assert envelope.model_dump() == {
        "operation": "fill_missing",
        "parameters": {"strategy": "mean"},
    }


BAD_ACTIONS: dict[str, tuple[str, Any, str]] = {
    "unknown_op": ("medium_missing_dtype", Action(operation="explode"), "UNKNOWN_OPERATION"),
    "not_allowed": (
        "easy_dedup_rename",
        Action(operation="remove_outliers"),
        "OPERATION_NOT_ALLOWED",
    ),
    "unknown_column": (
        "medium_missing_dtype",
        Action(operation="fill_missing", parameters={"column": "nope"}),
        "INVALID_PARAMETERS",
    ),
    "bad_strategy": (
        "medium_missing_dtype",
        Action(operation="fill_missing", parameters={"strategy": "magic"}),
        "INVALID_PARAMETERS",
    ),
    "column_int": (
        "medium_missing_dtype",
        Action(operation="fill_missing", parameters={"column": 5}),
        "INVALID_PARAMETERS",
    ),
    "extra_param": (
        "hard_full_pipeline",
        Action(operation="remove_duplicates", parameters={"keep": "last"}),
        "INVALID_PARAMETERS",
    ),
    "constant_no_value": (
        "medium_missing_dtype",
        Action(operation="fill_missing", parameters={"strategy": "constant"}),
        "INVALID_PARAMETERS",
    ),
    "lossy_cast": (
        "hard_full_pipeline",
        Action(operation="fix_dtype", parameters={"dtype": "int", "column": "price"}),
        "OPERATION_FAILED",
    ),
    "dict_unknown_op": ("medium_missing_dtype", {"operation": "explode"}, "UNKNOWN_OPERATION"),
    "dict_alias_bad": (
        "medium_missing_dtype",
        {"operation": "fill_missing_mean", "parameters": {"strategy": "mode"}},
        "INVALID_PARAMETERS",
    ),
    "dict_no_operation": ("medium_missing_dtype", {"parameters": {}}, "INVALID_ACTION"),
    "dict_operation_int": ("medium_missing_dtype", {"operation": 5}, "INVALID_ACTION"),
    "dict_params_list": (
        "medium_missing_dtype",
        {"operation": "fill_missing", "parameters": [1]},
        "INVALID_ACTION",
    ),
    "dict_extra_key": ("medium_missing_dtype", {"operation": "finish", "x": 1}, "INVALID_ACTION"),
    "dict_empty": ("medium_missing_dtype", {}, "INVALID_ACTION"),
    "text": ("medium_missing_dtype", "finish", "INVALID_ACTION"),
    "none": ("medium_missing_dtype", None, "INVALID_ACTION"),
    "number": ("medium_missing_dtype", 42, "INVALID_ACTION"),
    "list": ("medium_missing_dtype", [{"operation": "finish"}], "INVALID_ACTION"),
}


@pytest.mark.parametrize("case", list(BAD_ACTIONS))
def test_bad_action_never_raises_and_changes_nothing(case: str) -> None:
    task_id, action, code = BAD_ACTIONS[case]
    env = DataCleaningEnv(task_id=task_id)
    env.reset()
    previous = env.step(Action(operation="remove_duplicates"))
    before = env.state().model_dump()

    result = env.step(action)
    assert result.info["error"]["code"] == code
    assert result.info["error"]["detail"]
    assert code in result.observation.message
    assert result.info["error"]["detail"] in result.observation.message
    assert result.done is False
    assert result.observation.step == 1
    assert result.reward == previous.reward
    assert table_view(result) == table_view(previous)
    assert env.state().model_dump() == before
    json.dumps(result.observation.model_dump())

    follow = env.step(Action(operation="validate_schema"))
    assert "error" not in follow.info
    assert follow.observation.step == 2
    assert table_view(follow) == table_view(previous)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_step_after_done_reports_episode_finished(task_id: str) -> None:
    env = DataCleaningEnv(task_id=task_id)
    env.reset()
    finished = env.step(Action(operation="finish"))
    assert finished.done is True
    before = env.state().model_dump()
    for action in (
        Action(operation="validate_schema"),
        Action(operation="finish"),
        {"operation": "remove_duplicates"},
    ):
        result = env.step(action)
        assert result.done is True
        assert result.info["error"]["code"] == "EPISODE_FINISHED"
        assert "EPISODE_FINISHED" in result.observation.message
        assert result.reward == finished.reward
    assert env.state().model_dump() == before
    fresh = env.reset()
    assert fresh.done is False and fresh.observation.step == 0


def test_resets_start_fresh_episodes() -> None:
    env = DataCleaningEnv(task_id="easy_dedup_rename")
    first = env.reset()
    env.step(Action(operation="remove_duplicates"))
    second = env.reset()
    assert second.observation.episode_id != first.observation.episode_id
    assert second.observation.step == 0
    assert env.state().step_count == 0
    assert second.observation.model_dump(exclude={"episode_id"}) == (
        first.observation.model_dump(exclude={"episode_id"})
    )


def test_step_and_state_before_reset_start_an_episode() -> None:
    assert DataCleaningEnv(task_id="hard_full_pipeline").state().step_count == 0
    result = DataCleaningEnv(task_id="hard_full_pipeline").step(
        Action(operation="remove_duplicates")
    )
    assert result.observation.step == 1
    assert "error" not in result.info


def test_seed_shuffles_rows() -> None:
    one = DataCleaningEnv(task_id="expert_sales_pipeline", seed=1).reset()
    two = DataCleaningEnv(task_id="expert_sales_pipeline", seed=2).reset()
    one_again = DataCleaningEnv(task_id="expert_sales_pipeline").reset(seed=1)
    assert one.observation.sample_rows != two.observation.sample_rows
    assert one.observation.sample_rows == one_again.observation.sample_rows


def test_unknown_task_fails_at_construction() -> None:
    with pytest.raises(UnknownTask):
        DataCleaningEnv(task_id="no_such_task")


# ── the same actions through both doors ──────────────────────────────────────


def mixed_script(metadata: dict[str, dict], task_id: str) -> list[dict[str, Any]]:
    plan = metadata[task_id]["solution"]
    return [
        plan[0],
        {"operation": "fill_missing", "parameters": {"strategy": "ffill"}},
        {"operation": "no_such_operation"},
        {"operation": "fill_missing", "parameters": {"column": "nope"}},
        *plan[1:],
        {"operation": "validate_schema"},  # after finish
    ]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_in_process_and_http_agree(
    client: TestClient, metadata: dict[str, dict], task_id: str
) -> None:
    env = DataCleaningEnv(task_id=task_id, seed=5)
    local = env.reset(episode_id="both-doors")
    remote = client.post(f"/reset/{task_id}", json={"episode_id": "both-doors", "seed": 5})
    assert remote.json() == local.model_dump(mode="json")
    for action in mixed_script(metadata, task_id):
        local = env.step(action)
        remote = client.post(f"/step/{task_id}", json=action, params={"episode_id": "both-doors"})
        if remote.status_code == 200:
            assert "error" not in local.info
            assert remote.json() == local.model_dump(mode="json")
        else:
            assert local.info["error"] == remote.json()
    state = client.get("/state", params={"episode_id": "both-doors"}).json()
    assert state == env.state().model_dump(mode="json")
    assert state["done"] is True


def test_agent_script_from_project_root() -> None:
    """What the contract's in-process agent does, in a fresh interpreter in the root."""
    code = textwrap.dedent(
        """
        import json
        from environment import DataCleaningEnv
        from models import Action
        env = DataCleaningEnv(task_id="easy_dedup_rename")
        result = env.reset()
        steps = [
            Action(operation="remove_duplicates"),
            Action(operation="rename_columns", parameters={"mapping": {
                "EMP ID": "emp_id", "EMP NAME": "emp_name", "DEP T": "dept",
                "SAL ARY": "salary", "AGE": "age"}}),
            Action(operation="explode"),
            Action(operation="finish"),
        ]
        out = []
        for action in steps:
            result = env.step(action)
            out.append([result.reward.total, result.done, result.info.get("error", {}).get("code")])
        print(json.dumps({"steps": out, "obs": result.observation.model_dump()}))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["steps"] == [
        [0.5, False, None],
        [0.9999, False, None],
        [0.9999, False, "UNKNOWN_OPERATION"],
        [0.9999, True, None],
    ]
    assert answer["obs"]["columns"] == ["emp_id", "emp_name", "dept", "salary", "age"]


def test_observations_are_the_callers_own() -> None:
    """Two episodes of one instance take the same step (the second takes it over from the
    step memory); editing what one caller got changes nothing another caller gets."""
    first, second = DataCleaningEnv(seed=5), DataCleaningEnv(seed=5)
    first.reset(), second.reset()
    action = {"operation": "remove_duplicates", "parameters": {}}
    mine = first.step(action)
    before = second.step(action).observation.model_dump_json()
    mine.observation.column_profiles.clear()
    mine.observation.missing_values["extra"] = 1
    mine.observation.columns.append("extra")
    assert second.step({"operation": "noop", "parameters": {}}).observation.columns[-1] != "extra"
    again = DataCleaningEnv(seed=5)
    again.reset()
    assert again.step(action).observation.model_dump_json() == before
