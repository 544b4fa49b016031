"""TRL for real, in its own venv (`.ci/setup-training.sh` builds it): the offline
GRPO example trains three steps with tool calls that reach the environment, TRL turns every
generated tool into a schema, and the `log_completions` crash is reproduced and worked around."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from dataclean_env.operations.claims import cleaning_operation_names
from tests.support import ROOT, TRAINING_VENVS, need

TRL_PYTHON = TRAINING_VENVS / "trl" / "bin" / "python"
EXAMPLE = ROOT / "examples" / "trl_grpo.py"
STEP = re.compile(
    r"^\[STEP\] step=(\d+) loss=(-?\d+\.\d+) reward_mean=(\d+\.\d+) reward_std=(\d+\.\d+) "
    r"tool_calls=(\d+) refused=(\d+) rewards=(\S+)$"
)
DONE = re.compile(
    r"^\[DONE\] steps=(\d+) seconds=\d+ rollouts=(\d+) tool_calls=(\d+) refused=(\d+) "
    r"max_reward=(\d+\.\d+) nonzero_loss_steps=(\d+)$"
)
# Offline: no hub access at all, and none needed.
OFFLINE = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HOME": "/nonexistent",
}


def run_trl(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    need(TRL_PYTHON.exists(), "the TRL venv: run `bash .ci/setup-training.sh`")
    return subprocess.run(
        [str(TRL_PYTHON), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=OFFLINE,
    )


@pytest.mark.timeout(900)
def test_offline_grpo_trains_three_steps_on_real_tool_calls() -> None:
    result = run_trl(str(EXAMPLE))
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("[START] model=tiny-random-qwen2 ")
    assert "tools=7 env=in-process scripted_share=0.5" in lines[0]
    steps = [STEP.match(line) for line in lines[1:-1]]
    assert all(steps) and len(steps) == 3, lines
    assert [int(m[1]) for m in steps] == [1, 2, 3]
    for m in steps:
        rewards = [float(r) for r in m[7].split(",")]
        assert len(rewards) == 8  # 2 prompts x 4 generations
        # Half of each group follows the reference plan through the real tools: easy is
        # solved exactly (0.9999 - 0.0001); the model's own random samples call nothing.
        assert int(m[5]) > 0 and int(m[6]) == 0
        assert 0.9998 in rewards and 0.0 in rewards
    assert any(float(m[2]) != 0.0 for m in steps)
    done = DONE.match(lines[-1])
    assert done, lines[-1]
    assert (int(done[1]), int(done[2]), float(done[5])) == (3, 24, 0.9998)
    assert int(done[3]) == sum(int(m[5]) for m in steps)
    assert int(done[6]) >= 1


@pytest.mark.timeout(300)
def test_trl_builds_a_schema_for_every_generated_tool() -> None:
    script = (
        "import json\n"
        "from transformers.utils import get_json_schema\n"
        "from dataclean_env.training.trl_env import DataCleaningToolEnv\n"
        "from dataclean_env.operations.claims import cleaning_operation_names\n"
        "env = DataCleaningToolEnv()\n"
        "print(json.dumps({n: get_json_schema(getattr(env, n)) for n in cleaning_operation_names()}))\n"
    )
    result = run_trl("-c", script)
    assert result.returncode == 0, result.stderr[-3000:]
    schemas = json.loads(result.stdout)
    assert list(schemas) == cleaning_operation_names()
    assert all(schemas[name]["function"]["name"] == name for name in schemas)
    assert schemas["fill_missing"]["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "strategy": {
                "type": "string",
                "enum": ["mean", "median", "mode", "ffill", "bfill", "constant"],
                "description": "How to choose the fill value. Default: 'mean'.",
            },
            "column": {
                "type": "string",
                "nullable": True,
                "description": "One column (default: every column with missing values).",
            },
            "value": {
                "type": ["boolean", "integer", "number", "string"],
                "nullable": True,
                "description": "The fill value; required with strategy=constant, refused otherwise.",
            },
        },
    }
    assert schemas["finish"] == {
        "type": "function",
        "function": {
            "name": "finish",
            "description": "Declare the table clean and end the episode.",
            "parameters": {"type": "object", "properties": {}},
            "return": {
                "type": "string",
                "description": "What the step did, the episode's score, and the table after the step.",
            },
        },
    }
    set_cell = schemas["set_cell"]["function"]["parameters"]
    assert set_cell["required"] == ["row_id", "column", "value"]
    assert set_cell["properties"]["row_id"]["type"] == ["integer", "string"]
    # SQL: one text parameter each, described as the model must write it.
    for name, words in (("query", "One read-only SELECT"), ("sql", "Up to 20 UPDATE t")):
        function = schemas[name]["function"]
        assert function["description"].startswith(words), name
        assert function["parameters"]["required"] == ["sql"]
        sql = function["parameters"]["properties"]["sql"]
        assert sql["type"] == "string" and sql["description"].startswith(words), name


# One step on the easy task with a completion budget so short that the first tool result
# does not fit: every logged tool call is then `remove_duplicates` with `arguments: {}`.
ARGUMENT_FREE = ("--steps", "1", "--tasks", "easy_dedup_rename", "--max-completion-length", "100")


@pytest.mark.timeout(600)
def test_stock_trainer_crashes_on_argument_free_tool_calls_and_ours_does_not() -> None:
    stock = run_trl(str(EXAMPLE), *ARGUMENT_FREE, "--stock-trainer")
    assert stock.returncode != 0
    assert "Cannot write struct type 'arguments' with no child field to Parquet" in stock.stderr
    fixed = run_trl(str(EXAMPLE), *ARGUMENT_FREE)
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert DONE.match(fixed.stdout.splitlines()[-1])
    assert "tool_calls=4 refused=0 max_reward=0.4999" in fixed.stdout


def test_the_example_describes_its_flags() -> None:
    result = run_trl(str(EXAMPLE), "--help", timeout=300)
    assert result.returncode == 0, result.stderr
    help_text = " ".join(result.stdout.split())
    for described in (
        "--steps STEPS GRPO optimiser steps (default: 3)",
        "--tasks TASKS [TASKS ...] task ids whose instances make the prompts",
        "--seeds SEEDS [SEEDS ...] instance seeds per task, one prompt each",
    ):
        assert described in help_text
