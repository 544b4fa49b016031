"""The OpenEnv side over a real uvicorn on 127.0.0.1: the `openenv` client over /ws, many
sessions at once, capacity, malformed frames, /schema, /metadata, /mcp and `openenv validate`."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from openenv.core import GenericEnvClient
from websockets.sync.client import connect

from dataclean_env import __version__
from dataclean_env.client import CleaningAction, DataCleaningClient
from dataclean_env.engine.doors import attempt, start_episode
from dataclean_env.settings import Settings
from tests.support import ALL_TASK_IDS, TASK_IDS
from tests.web import LiveServer

ROOT = Path(__file__).resolve().parents[2]
OPENENV = str(Path(sys.executable).parent / "openenv")


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    # 64 sessions at once from one address (this test): the default server has no
    # per-client quota (the local profile)
    with LiveServer(Settings(max_sessions=80)) as live:
        yield live


def ws_url(server: LiveServer) -> str:
    return f"ws://127.0.0.1:{server.port}/ws"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_full_episode_with_the_typed_client(server, metadata, task_id) -> None:
    with DataCleaningClient(base_url=server.url).sync() as env:
        first = env.reset(task_id=task_id, seed=5)
        assert first.reward == 0.0
        assert first.observation.score == 0.0001
        assert first.observation.task_id == task_id
        rewards = []
        for action in metadata[task_id]["solution"]:
            result = env.step(CleaningAction(**action))
            rewards.append(result.reward)
        state = env.state()
    assert result.done is True
    assert result.observation.score == 0.9999
    assert result.observation.score_components.total == 0.9999
    # Summed /ws rewards are the final score minus the initial score.
    assert sum(rewards) == pytest.approx(
        result.observation.score - first.observation.score, abs=1e-9
    )
    assert state.step_count == len(metadata[task_id]["solution"])
    assert state.task_id == task_id


def test_generic_client_and_absolute_reward_mode(server) -> None:
    with GenericEnvClient(base_url=server.url).sync() as env:
        first = env.reset(task_id="easy_dedup_rename", reward_mode="absolute")
        assert first.reward == 0.0001
        step = env.step({"name": "remove_duplicates", "params": {}})
        assert step.reward == 0.5
        assert step.observation["score"] == 0.5


def test_refused_action_answers_with_the_unchanged_episode(server) -> None:
    with DataCleaningClient(base_url=server.url).sync() as env:
        env.reset(task_id="medium_missing_dtype")
        before = env.state()
        result = env.step(CleaningAction(operation="fill_missing", parameters={"column": "nope"}))
        assert result.reward == 0.0
        assert result.observation.info["error"]["code"] == "INVALID_PARAMETERS"
        assert result.observation.message.startswith("Error (INVALID_PARAMETERS)")
        assert env.state() == before


async def _play(url: str, index: int, task_id: str, plan: list[dict]) -> list[dict]:
    async with DataCleaningClient(base_url=url) as env:
        episode_id = f"session-{index}"
        first = await env.reset(task_id=task_id, seed=index, episode_id=episode_id)
        seen = [first.observation.model_dump(exclude={"reward", "done", "metadata"})]
        for action in plan:
            result = await env.step(CleaningAction(**action))
            seen.append(result.observation.model_dump(exclude={"reward", "done", "metadata"}))
            await asyncio.sleep(0)  # interleave with the other sessions
        return seen


def _reference(registry, index: int, task_id: str, plan: list[dict]) -> list[dict]:
    episode = start_episode(registry, task_id, index, episode_id=f"session-{index}")
    results = [(episode.result(), episode.score)]
    for action in plan:
        results.append((attempt(episode, action), episode.score))
    return [
        {
            **r.observation.model_dump(mode="json"),
            "score": score,
            "score_components": r.reward.model_dump(),
            "info": r.info,
        }
        for r, score in results
    ]


def test_64_concurrent_sessions_each_see_only_their_own_episode(server, registry, metadata) -> None:
    jobs = []
    for index in range(64):
        task_id = TASK_IDS[index % 4]
        plan = list(metadata[task_id]["solution"])
        if index % 2:  # half the sessions also do something damaging
            plan.insert(1, {"operation": "rename_columns", "parameters": {}})
        jobs.append((index, task_id, plan))

    async def everyone() -> list[list[dict]]:
        return await asyncio.gather(*(_play(server.url, *job) for job in jobs))

    seen = asyncio.run(everyone())
    for (index, task_id, plan), observations in zip(jobs, seen, strict=True):
        expected = _reference(registry, index, task_id, plan)
        got = [json.loads(json.dumps(o, default=str)) for o in observations]
        assert got == json.loads(json.dumps(expected, default=str)), f"session {index}"
        assert {o["episode_id"] for o in observations} == {f"session-{index}"}


def test_capacity_is_refused_with_an_error_frame_not_a_hang() -> None:
    live = LiveServer(Settings(max_sessions=2)).start()
    try:
        url = f"ws://127.0.0.1:{live.port}/ws"
        with connect(url) as first, connect(url) as second:
            for ws in (first, second):
                ws.send(json.dumps({"type": "reset", "data": {}}))
                assert json.loads(ws.recv(timeout=10))["type"] == "observation"
            with connect(url) as third:
                frame = json.loads(third.recv(timeout=10))
                assert frame["type"] == "error"
                assert frame["data"]["code"] == "CAPACITY_REACHED"
                assert frame["data"]["max_sessions"] == 2
                with pytest.raises(Exception, match="1000"):
                    third.recv(timeout=10)
            with pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
                DataCleaningClient(base_url=live.url).sync().reset()
        # Once a session closes, a new one is admitted.
        with DataCleaningClient(base_url=live.url).sync() as env:
            assert env.reset().observation.step == 0
    finally:
        live.close()


def test_malformed_frames_get_error_frames_and_the_connection_stays_usable(server) -> None:
    with connect(ws_url(server)) as ws:
        for bad, code in [
            ("not json", "INVALID_JSON"),
            (json.dumps({"type": "dance"}), "UNKNOWN_TYPE"),
            # REST's codes for the same input (tests/e2e/test_ws_rest_codes.py)
            (
                json.dumps({"type": "step", "data": {"operation": "x", "name": "y"}}),
                "INVALID_ACTION",
            ),
            (json.dumps({"type": "step", "data": {"parameters": {}}}), "INVALID_ACTION"),
            (json.dumps({"type": "reset", "data": {"task_id": "nope"}}), "UNKNOWN_TASK"),
            (json.dumps({"type": "reset", "data": {"seed": -1}}), "INVALID_ACTION"),
            (json.dumps({"type": "reset", "data": {"colour": "red"}}), "INVALID_ACTION"),
        ]:
            ws.send(bad)
            frame = json.loads(ws.recv(timeout=10))
            assert frame["type"] == "error", bad
            assert frame["data"]["code"] == code, bad
        ws.send(json.dumps({"type": "reset", "data": {"task_id": "easy_dedup_rename"}}))
        assert json.loads(ws.recv(timeout=10))["data"]["observation"]["step"] == 0
        ws.send(json.dumps({"type": "step", "data": {"operation": "remove_duplicates"}}))
        assert json.loads(ws.recv(timeout=10))["data"]["reward"] == 0.4999


def test_a_frame_that_is_not_an_object_gets_an_error_frame(server) -> None:
    """It used to end the session (issue 11); now the session goes on."""
    with connect(ws_url(server)) as ws:
        ws.send("[1, 2]")
        error = json.loads(ws.recv(timeout=10))
        assert error["type"] == "error" and error["data"]["code"] == "INVALID_JSON"
        ws.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(ws.recv(timeout=10))["data"]["observation"]["step"] == 0
    with DataCleaningClient(base_url=server.url).sync() as env:  # the server is fine
        assert env.reset().observation.step == 0


def test_schema_describes_the_real_action_observation_and_state(server) -> None:
    schema = httpx.get(f"{server.url}/schema").json()
    action = schema["action"]
    assert "remove_duplicates" in action["properties"]["operation"]["enum"]
    assert "fill_missing_mean" in action["properties"]["operation"]["enum"]
    variants = {v["properties"]["operation"]["const"]: v for v in action["anyOf"]}
    assert set(variants) == {
        "remove_duplicates",
        "dedupe",
        "rename_columns",
        "fill_missing",
        "fix_dtype",
        "remove_outliers",
        "clamp_outliers",
        "validate_schema",
        "finish",
        "strip",
        "lower",
        "upper",
        "title",
        "replace",
        "map",
        "regex_replace",
        "replace_missing",
        "normalize_dates",
        "phone_us",
        "decimal2",
        "fd_repair",
        "program",
        "drop_rows",
        "set_cell",
        "set_cells",
        "show_rows",
        # reading a large table, and SQL over it (generated families, brought tables)
        "value_counts",
        "find_rows",
        "query",
        "sql",
        # labelled real tables only
        "label",
        # the tasks graded on claims (detection, standardisation, audit)
        "report_errors",
        "standardise",
        "audit",
        "identify",
        "fix",
        "validate",
    }
    # A nested parameter model is written in place, not as an unresolvable "$ref".
    cell = variants["report_errors"]["properties"]["parameters"]["properties"]["cells"]["items"]
    assert set(cell["properties"]) == {"row_id", "column", "error_type"}
    fill = variants["fill_missing"]["properties"]["parameters"]["properties"]
    assert fill["strategy"]["enum"] == ["mean", "median", "mode", "ffill", "bfill", "constant"]
    assert {"score", "score_components", "sample_rows", "reward", "done"} <= set(
        schema["observation"]["properties"]
    )
    # SQL: what each statement may be, and the observation field a query's result fills.
    for name, words in (("query", "One read-only SELECT"), ("sql", "Up to 20 UPDATE t")):
        sql = variants[name]["properties"]["parameters"]["properties"]["sql"]
        assert sql["maxLength"] == 20_000 and words in sql["description"], name
    result = schema["observation"]["properties"]["query_result"]
    assert result["anyOf"] == [{"$ref": "#/$defs/QueryResult"}, {"type": "null"}]
    shape = schema["observation"]["$defs"]["QueryResult"]
    assert shape["required"] == ["columns", "rows", "total_rows", "truncated"]
    assert {"episode_id", "step_count", "history", "task_id"} <= set(schema["state"]["properties"])


def test_metadata_health_and_mcp(server) -> None:
    metadata = httpx.get(f"{server.url}/metadata").json()
    assert metadata["name"] == "data-cleaning-openenv"
    assert metadata["version"] == __version__
    assert metadata["readme_content"].startswith("---")
    assert httpx.get(f"{server.url}/health").json() == {
        "status": "healthy",
        "tasks_loaded": len(ALL_TASK_IDS),
    }
    answer = httpx.post(
        f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    )
    assert answer.status_code == 200
    assert answer.json()["jsonrpc"] == "2.0"


def validate(*options: str) -> str:
    result = subprocess.run(
        [OPENENV, "validate", *options, str(ROOT)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_openenv_validate_static_level_passes_without_warnings() -> None:
    out = validate("--level", "static")
    assert "PASS  static.manifest" in out
    assert out.rstrip().endswith("Verdict: PASS")
    assert "WARN" not in out and "SKIP" not in out


def test_openenv_validate_reads_the_execution_declaration() -> None:
    # The runtime level builds the Dockerfile and needs a Docker engine (none here):
    # --skip-build shows the declaration is read, so runtime.startup is skipped only for
    # the build, never for a missing `validation.execution`.
    out = validate("--skip-build")
    assert "PASS  static.manifest" in out
    assert "--skip-build: build-dependent runtime checks skipped" in out
    assert "missing validation.execution" not in out
    assert "FAIL" not in out


def test_the_runtime_plan_plays_to_the_end_over_ws(server) -> None:
    # What runtime.startup collects once the container is up, by openenv's own collector,
    # against this server: the declared plan must reach `done` with the reference score.
    from openenv.validation.manifest import ExecutionDeclaration
    from openenv.validation.runtime.collector import collect_runtime_evidence
    from openenv.validation.runtime.contracts import load_runtime_plan

    declared = yaml.safe_load((ROOT / "openenv.yaml").read_text(encoding="utf-8"))
    execution = ExecutionDeclaration(**declared["validation"]["execution"])
    plan = load_runtime_plan(ROOT, execution)
    evidence = collect_runtime_evidence(server.url, plan, episode_timeout_s=60)
    assert evidence.failure_reason is None
    # The collector reads the state after the reset and after every step.
    assert [e.operation for e in evidence.exchanges] == ["reset", "state"] + ["step", "state"] * 3
    last = json.loads(evidence.exchanges[-2].response_json)["data"]
    assert last["done"] is True
    assert last["observation"]["score"] == 0.9999


def test_openenv_validate_url_passes_against_a_running_server(server) -> None:
    result = subprocess.run(
        [OPENENV, "validate", "--url", server.url], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Verdict: PASS" in result.stdout
    assert result.stdout.count("PASS  ") == 6


def test_the_documented_agent_loop_runs_as_written(server, capsys) -> None:
    reference = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = reference.split("## Use from OpenEnv / TRL", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert 'base_url="http://127.0.0.1:7860"' in code
    exec(code.replace("http://127.0.0.1:7860", server.url), {})
    assert capsys.readouterr().out.strip() == "0.9999 0.9998 True"
