"""TRL for real, in its own venv (`.ci/setup-training.sh` builds it): the offline
GRPO example trains three steps on generated families with tool calls that reach the
environment, any task ids make its tools, TRL turns every generated tool into a schema, and the
`log_completions` crash is reproduced and worked around."""

from __future__ import annotations

import json
import os
import re
import subprocess

import numpy as np
import pytest

from dataclean_env.operations.claims import cleaning_operation_names
from tests.support import ROOT
from tests.tools import TRL_PYTHON

pytestmark = pytest.mark.needs("trl")
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
# The operations of the claim tasks and of the labelled custom task.
OTHER_TOOLS = ["audit", "fix", "identify", "label", "report_errors", "standardise", "validate"]


def run_trl(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TRL_PYTHON), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=OFFLINE,
    )


# The default run: two prompts per step (4 generations each), each task's two seeds in one
# step. Half of each group plays the oracle's moves through the real tools; the model's own
# samples call nothing and gain 0. fix_types and crm reach their reference plan's gain within
# the completion budget; normalize_dedupe's plan (8-9 calls) is cut part-way.
DEFAULT_STEPS = [
    # (tool calls, refused, each rollout's get_reward())
    (8, 0, [0.8089, 0.8089, 0.0, 0.0, 0.8047, 0.8047, 0.0, 0.0]),  # crm
    (8, 0, [0.7999, 0.7999, 0.0, 0.0, 0.7999, 0.7999, 0.0, 0.0]),  # fix_types
    (16, 0, [0.4689, 0.4689, 0.0, 0.0, 0.2667, 0.2667, 0.0, 0.0]),  # normalize_dedupe
]


def steps_of(lines: list[str]) -> list[tuple[int, int, list[float]]]:
    """Each [STEP] line's tool calls, refusals and rewards; its reward_mean is TRL's mean of
    the step's rollout rewards. Both are printed to 4 places, so the printed mean is within
    0.0001 of the printed rewards' mean (half a unit from each rounding): two rewards of
    0.9998, two of 0.92084 and four of 0 print a mean of 0.4802; their printed values' mean is
    0.48015."""
    steps = [STEP.match(line) for line in lines]
    assert all(steps), lines
    parsed = []
    for m in steps:
        rewards = [float(r) for r in m[7].split(",")]
        assert abs(float(m[3]) - float(np.mean(rewards))) <= 0.0001 + 1e-6, m[0]  # + float32 error
        parsed.append((int(m[5]), int(m[6]), rewards))
    return parsed


def test_offline_grpo_trains_three_steps_on_generated_families() -> None:
    result = run_trl(str(EXAMPLE))
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("[START] model=tiny-random-qwen2 ")
    # The tools: what fix_types, normalize_dedupe and crm allow (20 operations).
    assert "tools=20 env=in-process scripted_share=0.5" in lines[0]
    assert [int(line.split()[1].split("=")[1]) for line in lines[1:-1]] == [1, 2, 3]
    assert steps_of(lines[1:-1]) == DEFAULT_STEPS
    done = DONE.match(lines[-1])
    assert done, lines[-1]
    assert [done[i] for i in range(1, 7)] == ["3", "24", "32", "0", "0.8089", "3"]
    # docs/training.md shows this run's output (its seconds aside).
    assert documented_run() == [SECONDS.sub("seconds=S", line) for line in lines]


SECONDS = re.compile(r"seconds=\d+")


def documented_run() -> list[str]:
    text = (ROOT / "docs" / "training.md").read_text()
    block = text.split("```\n[START] model=tiny-random-qwen2 ", 1)[1].split("```", 1)[0]
    return [
        SECONDS.sub("seconds=S", line)
        for line in f"[START] model=tiny-random-qwen2 {block}".splitlines()
    ]


@pytest.mark.timeout(1800)  # 9 minutes once on a busy 2-core machine: a safety net only
def test_any_task_ids_make_the_tools_a_claim_task_and_a_hyphenated_custom_one() -> None:
    # error_detection's claims take nested objects; rayyan-labelled's id has a hyphen. Its
    # four oracle rollouts: report_errors then finish (0.9998); the real table's first call.
    result = run_trl(
        str(EXAMPLE),
        "--steps",
        "1",
        "--tasks",
        "error_detection",
        "rayyan-labelled",
        "--seeds",
        "0",
        timeout=1700,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert "tools=32 env=in-process" in lines[0]  # rayyan-labelled's 31 and report_errors
    assert steps_of(lines[1:-1]) == [
        (6, 0, [0.9998, 0.9998, 0.0, 0.0, 0.9208, 0.9208, 0.0, 0.0]),
    ]


def test_trl_builds_a_schema_for_every_generated_tool() -> None:
    script = (
        "import json\n"
        "from transformers.utils import get_json_schema\n"
        "from dataclean_env.tasks import default_registry\n"
        "from dataclean_env.training.trl_env import task_operations, tool_env_class\n"
        "tools = sorted(task_operations(default_registry().task_ids()))\n"
        "env = tool_env_class(tools)()\n"
        "print(json.dumps({n: get_json_schema(getattr(env, n)) for n in tools}))\n"
    )
    result = run_trl("-c", script)
    assert result.returncode == 0, result.stderr[-3000:]
    schemas = json.loads(result.stdout)
    # Every operation some task allows: the cleaning ones and the claims'.
    assert list(schemas) == sorted([*cleaning_operation_names(), *OTHER_TOOLS])
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
    cells = schemas["report_errors"]["function"]["parameters"]["properties"]["cells"]
    assert cells["type"] == "array" and cells["items"] == {
        "type": "object",
        "additionalProperties": {},
    }
    assert "Each an object with row_id: Key value of the row" in cells["description"]
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
        "--tasks TASKS [TASKS ...] task ids whose instances make the prompts; the operations "
        "they allow are the tools (default: fix_types normalize_dedupe crm)",
        "--seeds SEEDS [SEEDS ...] instance seeds per task, one prompt each (default: 0 1)",
        "--generations GENERATIONS completions per prompt (default: 4)",
        "--max-completion-length MAX_COMPLETION_LENGTH tokens per rollout, all turns "
        "(default: 768)",
        "--max-new-tokens MAX_NEW_TOKENS per model turn (default: 64 offline, 256 with --model)",
        "--rows-shown ROWS_SHOWN sample rows per observation (default: 2 offline, 5 with --model)",
    ):
        assert described in help_text
