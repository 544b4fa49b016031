"""verifiers 0.4 for real, in its own venv (`.ci/setup-training.sh` builds it):
`vf-eval` plays episodes of a live server through verifiers' OpenEnv bridge, with a scripted
OpenAI-compatible model on 127.0.0.1, and every score it reports is the one the server
computes for the same actions."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.fake_chat_model import FakeChatModel
from tests.support import ROOT, ok
from tests.tools import VF_EVAL
from tests.web import LiveServer

pytestmark = pytest.mark.needs("verifiers")
TASKSET = ROOT / "integrations" / "verifiers"


def taskset_env() -> dict[str, str]:
    """The environment `vf-eval` runs in: this checkout's taskset first on the import path,
    ahead of the venv's editable install, which points to the checkout that built the venv
    (perhaps another one, or one since removed)."""
    path = os.pathsep.join(filter(None, [str(TASKSET), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "FAKE_MODEL_KEY": "unused"}


def test_vf_eval_imports_this_checkouts_taskset() -> None:
    # The venv may have been built for another checkout (its editable install points there):
    # the taskset under test must still be this one's.
    where = subprocess.run(
        [
            str(VF_EVAL.parent / "python"),
            "-c",
            "import dataclean_verifiers; print(dataclean_verifiers.__file__)",
        ],
        capture_output=True,
        text=True,
        env=taskset_env(),
        cwd="/",
        timeout=120,
    )
    assert where.returncode == 0, where.stderr[-2000:]
    assert Path(where.stdout.strip()) == TASKSET / "dataclean_verifiers" / "__init__.py"


@pytest.fixture
def model():
    fake = FakeChatModel().start()
    try:
        yield fake
    finally:
        fake.close()


HINT = "vf-eval will be deprecated - move to prime-rl's `uv run eval`"
ROLLOUT_DONE = re.compile(r"INFO rollout done: id=\S+ task=\d+ reward=\d\.\d{3} turns=\d+ stop=\w+")


def vf_eval(server: LiveServer, model: FakeChatModel, out: Path, *options: str):
    """Start `vf-eval` on the taskset (local harness, no upload) and return the process."""
    command = [
        str(VF_EVAL),
        "dataclean-verifiers",
        "--env.taskset.base-url",
        server.url,
        *options,
        "--model",
        "scripted-heuristic",
        "--client.base-url",
        model.url,
        "--client.api-key-var",
        "FAKE_MODEL_KEY",
        "--env.player.harness.id",
        "null",
        "--env.player.runtime.type",
        "subprocess",
        "--no-push",
        "--no-rich",
        "--output-dir",
        str(out),
    ]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=out,
        env=taskset_env(),
    )


def traces(out: Path) -> list[dict[str, Any]]:
    (path,) = out.glob("*/traces.jsonl")
    return [trace for line in path.read_text().splitlines() for trace in json.loads(line)["traces"]]


def replay(server: LiveServer, reset: dict[str, Any], actions: list[dict], tag: str) -> float:
    """The server's own score gain (final - initial) for these actions on that instance."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        start = ok(http.post("/reset", json={**reset, "episode_id": tag}))
        final = start
        for action in actions:
            final = ok(http.post("/step", json={"episode_id": tag, "action": action}))
    return final["reward"]["total"] - start["reward"]["total"]


def conversation(trace: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    """The bridge's user payloads and the model's replies (as actions), in order."""
    messages = [node["message"] for node in trace["nodes"]]
    payloads = [json.loads(m["content"]) for m in messages if m["role"] == "user"]
    actions = [json.loads(m["content"]) for m in messages if m["role"] == "assistant"]
    return payloads, actions


def test_vf_eval_scores_equal_the_servers(tmp_path: Path, model: FakeChatModel) -> None:
    server = LiveServer().start()
    try:
        compact_out, stock_out = tmp_path / "compact", tmp_path / "stock"
        compact_out.mkdir()
        stock_out.mkdir()
        # Both runs at once (each turn mostly waits for verifiers' harness to start).
        compact = vf_eval(
            server,
            model,
            compact_out,
            *(
                "--env.taskset.families",
                '["easy_dedup_rename", "medium_missing_dtype", "rayyan-labelled"]',
            ),
            *("--env.taskset.max-turns", "5"),
        )
        stock = vf_eval(
            server,
            model,
            stock_out,
            *("--env.taskset.families", '["easy_dedup_rename"]'),
            *("--env.taskset.seeds", "1"),
            *("--env.taskset.compact-schema", "false"),
            *("--env.taskset.max-turns", "None"),
        )
        logs = []
        for process in (compact, stock):
            _, stderr = process.communicate(timeout=800)
            assert process.returncode == 0, stderr[-3000:]
            logs.append(stderr)
        # What docs/training.md quotes of verifiers' log: its notice and a line per rollout.
        assert all(HINT in log for log in logs)
        assert len(ROLLOUT_DONE.findall(logs[0])) == 3 and len(ROLLOUT_DONE.findall(logs[1])) == 1

        full_schema = ok(httpx.get(f"{server.url}/schema"))["action"]
        played = {}
        for out, schema_of in (
            (compact_out, lambda task: compact_schema(server, task)),
            (stock_out, lambda task: full_schema),
        ):
            for trace in traces(out):
                reset = trace["task"]["data"]["reset"]
                payloads, actions = conversation(trace)
                score = trace["rewards"]["openenv_reward"]["score"]
                tag = f"replay-{out.name}-{reset['task_id']}-{reset['seed']}"
                assert score == pytest.approx(replay(server, reset, actions, tag), abs=1e-9)
                assert all(p["action_schema"] == schema_of(reset["task_id"]) for p in payloads)
                assert payloads[0]["observation"]["step"] == 0
                played[(out.name, reset["task_id"], reset["seed"])] = (score, actions, trace)
        assert sorted(played) == [
            ("compact", "easy_dedup_rename", 0),
            ("compact", "medium_missing_dtype", 0),
            ("compact", "rayyan-labelled", 0),
            ("stock", "easy_dedup_rename", 1),
        ]
        # SQL through the bridge: the scripted model reads the query's result from the
        # observation it is sent (query_result), labels those rows, then reads the table with
        # aggregate queries until the five-turn cap stops it (its `sql` repair comes later).
        _, sql_actions, sql_trace = played[("compact", "rayyan-labelled", 0)]
        operations = [a["operation"] for a in sql_actions]
        assert operations == ["query", "label", "query", "query", "query"]
        assert sql_trace["stop_condition"] == "max_turns"
        result = conversation(sql_trace)[0][1]["observation"]["query_result"]
        assert (len(result["rows"]), result["total_rows"], result["truncated"]) == (20, 20, False)
        # The heuristic solves the easy task within the cap; on the medium one the cap
        # stops it after five actions, before its `finish` (the table is clean by then).
        easy, easy_actions, _ = played[("compact", "easy_dedup_rename", 0)]
        assert easy == 0.9998 and easy_actions[-1]["operation"] == "finish"
        medium, medium_actions, medium_trace = played[("compact", "medium_missing_dtype", 0)]
        assert len(medium_actions) == 5 and medium_trace["stop_condition"] == "max_turns"
        assert medium == 0.9998 and "finish" not in [a["operation"] for a in medium_actions]
        assert played[("stock", "easy_dedup_rename", 1)][0] == 0.9998
        # Every action the scripted model chose reached the server through the bridge.
        assert sum(len(a) for a in model.actions.values()) == sum(
            len(actions) for _, actions, _ in played.values()
        )
    finally:
        server.close()


def compact_schema(server: LiveServer, task_id: str) -> dict[str, Any]:
    return ok(httpx.get(f"{server.url}/schema/compact", params={"task_id": task_id}))
