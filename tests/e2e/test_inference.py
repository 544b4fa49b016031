"""inference.py prints the graders' exact log lines, offline and against a real server."""

from __future__ import annotations

import json
import re

import pytest

import inference
from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.benchmark.normalised import MEANING
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.runner.logs import end_line, start_line, step_line
from dataclean_env.runner.loop import run_episode
from tests.support import TASK_IDS

START = re.compile(r"^\[START\] task=(\S+) env=data-cleaning-openenv model=(\S+)$")
STEP = re.compile(
    r"^\[STEP\] step=(\d+) action=(\S.*) reward=(\d+\.\d\d) done=(true|false) error=(\S.*)$"
)
END = re.compile(
    r"^\[END\] success=(true|false) steps=(\d+) score=(\d+\.\d\d) rewards=(\d+\.\d\d(,\d+\.\d\d)*)?$"
)


@pytest.fixture(autouse=True)
def no_llm_key(monkeypatch) -> None:
    """Offline: without a key the runner uses the heuristic agent and no network."""
    for name in ("HF_TOKEN", "OPENAI_API_KEY", "API_BASE_URL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)


def check_episode_lines(lines: list[str]) -> tuple[re.Match, list[re.Match], re.Match]:
    """Every line of one episode matches its strict pattern; steps count up from 1; [END]
    repeats the step rewards and counts the steps."""
    start, end = START.match(lines[0]), END.match(lines[-1])
    steps = [STEP.match(line) for line in lines[1:-1]]
    assert start and end and all(steps), lines
    assert [int(m.group(1)) for m in steps] == list(range(1, len(steps) + 1))
    assert int(end.group(2)) == len(steps)
    assert (end.group(4) or "").split(",") == ([m.group(3) for m in steps] or [""])
    return start, steps, end


def episodes_of(out: str) -> list[list[str]]:
    episodes: list[list[str]] = []
    for line in out.strip().splitlines():
        if line.startswith("[START]"):
            episodes.append([])
        episodes[-1].append(line)
    return episodes


def test_the_line_formats_are_exact() -> None:
    action = {"operation": "fill_missing", "parameters": {"strategy": "mean", "column": "a b"}}
    assert start_line("fix_types", "Qwen/Qwen2.5 72B") == (
        "[START] task=fix_types env=data-cleaning-openenv model=Qwen/Qwen2.5-72B"
    )
    assert step_line(3, action, 0.456, False, None) == (
        '[STEP] step=3 action={"operation":"fill_missing","parameters":'
        '{"strategy":"mean","column":"a b"}} reward=0.46 done=false error=null'
    )
    assert step_line(4, None, 0.9999, True, "bad\n  reply") == (
        "[STEP] step=4 action=null reward=1.00 done=true error=bad reply"
    )
    assert step_line(5, action, 0.5, False, "   ").endswith("error=null")
    assert end_line(True, 2, 0.9999, [0.5, 0.9999]) == (
        "[END] success=true steps=2 score=1.00 rewards=0.50,1.00"
    )
    assert end_line(False, 0, 0.0001, []) == "[END] success=false steps=0 score=0.00 rewards="
    for line in (step_line(4, None, 0.9999, True, "x"), step_line(3, action, 0.456, False, None)):
        assert STEP.match(line)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_heuristic_run_prints_the_exact_log_format(task_id, capsys) -> None:
    score = inference.run_episode(task_id)
    start, steps, end = check_episode_lines(capsys.readouterr().out.strip().splitlines())
    assert start.groups() == (task_id, "heuristic-baseline")
    assert steps[-1].group(4) == "true"
    assert end.group(3) == f"{score:.2f}" == "1.00"


def test_the_default_run_is_offline_and_covers_every_task(registry, capsys) -> None:
    assert inference.main([]) == 0
    captured = capsys.readouterr()
    episodes = episodes_of(captured.out)
    assert [START.match(e[0]).group(1) for e in episodes] == registry.task_ids()
    for lines in episodes:
        start, _, _ = check_episode_lines(lines)
        assert start.group(2) == "heuristic-baseline"
    assert "heuristic agent runs, offline" in captured.err


def test_end_score_is_the_final_score_not_the_mean_of_step_rewards(capsys) -> None:
    inference.run_episode("hard_full_pipeline")
    _, steps, end = check_episode_lines(capsys.readouterr().out.strip().splitlines())
    rewards = [float(m.group(3)) for m in steps]
    assert rewards == [0.2, 0.3, 0.4, 0.8, 1.0, 1.0, 1.0]
    assert end.group(3) == "1.00"  # the mean of the step rewards would be 0.67


def test_end_line_is_printed_after_an_exception(monkeypatch, capsys) -> None:
    def explode(self, observation):
        raise RuntimeError("agent crashed")

    monkeypatch.setattr(HeuristicAgent, "act", explode)
    env = LocalBackend(inference.default_registry())
    result = run_episode(env, HeuristicAgent(), EpisodeKey("easy_dedup_rename", 0, "eval"))
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "[START] task=easy_dedup_rename env=data-cleaning-openenv model=heuristic-baseline",
        "[END] success=false steps=0 score=0.00 rewards=",
    ]
    assert result.error == "RuntimeError: agent crashed"
    assert "RuntimeError: agent crashed" in captured.err  # the traceback, on stderr
    # The command line reports it in its exit status.
    assert inference.main(["--tasks", "easy_dedup_rename"]) == 1


def test_end_line_after_a_crash_mid_episode_and_after_an_interrupt(monkeypatch, capsys) -> None:
    real_act = HeuristicAgent.act
    calls = []

    def second_call_fails(error):
        def act(self, observation):
            calls.append(1)
            if len(calls) % 2 == 0:
                raise error
            return real_act(self, observation)

        return act

    monkeypatch.setattr(HeuristicAgent, "act", second_call_fails(ValueError("boom")))
    assert inference.main(["--tasks", "easy_dedup_rename"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "[END] success=true steps=1 score=0.50 rewards=0.50"
    )
    calls.clear()
    monkeypatch.setattr(HeuristicAgent, "act", second_call_fails(KeyboardInterrupt()))
    assert inference.main(["--tasks", "easy_dedup_rename", "fix_types"]) == 130
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "[END] success=true steps=1 score=0.50 rewards=0.50"
    assert sum(line.startswith("[START]") for line in lines) == 1  # the run stopped there


def test_selection_flags_and_the_results_file(registry, tmp_path, capsys) -> None:
    generated = [s.task_id for s in registry.specs() if s.family == "generated"]
    results = tmp_path / "runs" / "results.jsonl"
    argv = ["--family", "generated", "--seeds", "3,1", "--split", "test"]
    argv += ["--episodes", str(len(generated) + 1), "--agent", "oracle"]
    assert inference.main([*argv, "--results", str(results)]) == 0
    episodes = episodes_of(capsys.readouterr().out)
    records = [json.loads(line) for line in results.read_text().splitlines()]
    # Seed-major order: every family at seed 3, then the first at seed 1, where it is cut.
    assert [(r["task_id"], r["seed"]) for r in records] == [
        *((task_id, 3) for task_id in generated),
        (generated[0], 1),
    ]
    assert len(episodes) == len(records)
    for record, lines in zip(records, episodes, strict=True):
        _, steps, end = check_episode_lines(lines)
        assert set(record) == {
            "task_id", "split", "seed", "model", "steps", "score", "success",
            "components", "invalid_actions", "rows_lost", "wall_time_s", "error", "repair",
            "labels_used",
        }  # fmt: skip
        assert record["repair"] is None  # only real tables report cell-repair figures
        assert record["labels_used"] is None  # only labelled variants count labels
        assert record["split"] == "test"
        assert record["model"] == "oracle-replay"
        assert record["score"] == record["components"]["total"] == 0.9999
        assert end.group(3) == "1.00"
        assert record["steps"] == len(steps)
        assert (record["invalid_actions"], record["rows_lost"], record["error"]) == (0, 0, None)


def test_the_run_ends_with_a_summary_on_stderr_and_only_log_lines_on_stdout(capsys) -> None:
    argv = ["--tasks", "easy_dedup_rename", "fix_types", "rayyan-labelled", "--seeds", "0-1"]
    assert inference.main(argv) == 0
    captured = capsys.readouterr()
    assert {line[: line.index("]") + 1] for line in captured.out.splitlines()} == {
        "[START]",
        "[STEP]",
        "[END]",
    }
    for lines in episodes_of(captured.out):
        check_episode_lines(lines)
    assert captured.err.splitlines()[-8:] == [
        "6 episodes, mean final score 0.7827",
        "task=easy_dedup_rename episodes=2 mean_score=0.9999",
        "task=fix_types episodes=2 mean_score=0.7333",
        # a real table's score is net repair, its F1 reported beside it
        "task=rayyan-labelled episodes=2 mean_score=0.6149 mean_f1=0.8163 mean_labels_used=20.0",
        "family=fixed episodes=2 mean_score=0.9999",
        "family=generated episodes=2 mean_score=0.7333",
        "family=custom episodes=2 mean_score=0.6149 mean_f1=0.8163 mean_labels_used=20.0",
        f"6 episodes, mean normalised score 0.7606. {MEANING}",
    ]


def test_one_generated_family_is_selected_by_its_id(capsys) -> None:
    assert inference.main(["--family", "crm", "--seeds", "0-1", "--agent", "noop"]) == 0
    starts = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[START]")]
    assert starts == ["[START] task=crm env=data-cleaning-openenv model=noop-baseline"] * 2


def test_bad_selections_are_refused_before_any_episode(capsys) -> None:
    for argv in (["--tasks", "no_such_task"], ["--seeds", "1-x"], ["--family", "fixd"]):
        with pytest.raises(SystemExit) as stop:
            inference.main(argv)
        assert stop.value.code != 0
    assert capsys.readouterr().out == ""


def test_env_url_runs_the_same_episodes_against_a_real_server(live_server, capsys) -> None:
    argv = ["--tasks", "expert_sales_pipeline", "normalize_dedupe", "--seeds", "2"]
    assert inference.main(argv) == 0
    local = capsys.readouterr().out
    assert inference.main([*argv, "--env-url", live_server.url]) == 0
    remote = capsys.readouterr().out
    assert remote == local
    assert len(episodes_of(remote)) == 2
    for lines in episodes_of(remote):
        check_episode_lines(lines)


def test_real_table_repair_figures_are_the_same_in_process_and_over_ws(
    live_server, tmp_path, capsys
) -> None:
    """The results file carries precision/recall/F1 for rayyan, read from info['repair']
    in-process and from the /ws observation's info remotely."""
    argv = ["--tasks", "rayyan", "--seeds", "1", "--agent", "random"]
    local_file, remote_file = tmp_path / "local.jsonl", tmp_path / "remote.jsonl"
    assert inference.main([*argv, "--results", str(local_file)]) == 0
    local = capsys.readouterr().out
    argv += ["--env-url", live_server.url, "--results", str(remote_file)]
    assert inference.main(argv) == 0
    assert capsys.readouterr().out == local
    (local_record,) = [json.loads(line) for line in local_file.read_text().splitlines()]
    (remote_record,) = [json.loads(line) for line in remote_file.read_text().splitlines()]
    repair = local_record["repair"]
    assert set(repair) == {"precision", "recall", "f1", "cells_changed"}
    assert repair["cells_changed"] > 0  # the random agent changes cells
    assert remote_record["repair"] == repair
    # The score is net repair, (repaired - wrong changes) / rayyan's 948 wrong cells, floored.
    repaired = round(repair["recall"] * 948)
    net = (repaired - (repair["cells_changed"] - repaired)) / 948
    assert local_record["score"] == max(0.0001, round(net, 4))


def test_the_heuristic_scores_above_zero_on_rayyan_offline(capsys) -> None:
    """The exact [END] line of the offline heuristic on rayyan, and a summary that says F1."""
    assert inference.main(["--tasks", "rayyan", "--seeds", "0"]) == 0
    captured = capsys.readouterr()
    (lines,) = episodes_of(captured.out)
    _, _, end = check_episode_lines(lines)
    # net repair, (63 right - 46 wrong) / 948; F1 0.1192 reported beside it
    assert lines[-1].startswith("[END] success=false steps=11 score=0.02 rewards=")
    assert float(end.group(3)) > 0
    assert "task=rayyan episodes=1 mean_score=0.0179 mean_f1=0.1192" in captured.err
