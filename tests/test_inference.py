"""inference.py prints the graders' exact log lines and reaches the optimal score offline."""

from __future__ import annotations

import re

import pytest

import inference

START = re.compile(r"^\[START\] task=(\S+) env=data-cleaning-openenv model=(\S+)$")
STEP = re.compile(
    r"^\[STEP\] step=(\d+) action=(\S.*) reward=(\d+\.\d\d) done=(true|false) error=(.+)$"
)
END = re.compile(
    r"^\[END\] success=(true|false) steps=(\d+) score=(\d+\.\d\d) rewards=(\d+\.\d\d(,\d+\.\d\d)*)?$"
)


@pytest.mark.parametrize(
    "task_id",
    ["easy_dedup_rename", "medium_missing_dtype", "hard_full_pipeline", "expert_sales_pipeline"],
)
def test_heuristic_run_prints_the_exact_log_format(task_id, capsys) -> None:
    score = inference.run_episode(task_id)
    lines = capsys.readouterr().out.strip().splitlines()
    assert START.match(lines[0]).group(1) == task_id
    steps = [STEP.match(line) for line in lines[1:-1]]
    assert all(steps), lines
    assert [int(m.group(1)) for m in steps] == list(range(1, len(steps) + 1))
    assert steps[-1].group(4) == "true"
    end = END.match(lines[-1])
    assert end, lines[-1]
    assert int(end.group(2)) == len(steps)
    assert end.group(3) == f"{score:.2f}" == "1.00"
    assert end.group(4).split(",") == [m.group(3) for m in steps]


def test_end_line_is_printed_after_an_exception(monkeypatch, capsys) -> None:
    def explode(self, observation):
        raise RuntimeError("agent crashed")

    monkeypatch.setattr(inference.HeuristicAgent, "act", explode)
    with pytest.raises(RuntimeError):
        inference.run_episode("easy_dedup_rename")
    lines = capsys.readouterr().out.strip().splitlines()
    assert START.match(lines[0])
    assert lines[-1] == "[END] success=false steps=0 score=0.00 rewards="
