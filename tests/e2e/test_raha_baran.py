"""Raha + Baran for real, in its own venv (`.ci/setup-raha.sh` builds it): one run of
integrations/raha/raha_baran.py against a live server, its figures checked against this
project's grader by replaying the steps it applied."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import dataclean_env.engine.episode as episode_module
from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.table.limits import untimed_limits
from dataclean_env.tasks import default_registry
from dataclean_env.tasks.custom import LABEL_BUDGET
from tests.support import ROOT
from tests.tools import RAHA_PYTHON
from tests.web import LiveServer

pytestmark = pytest.mark.needs("raha")
AGENT = ROOT / "integrations" / "raha" / "raha_baran.py"


@pytest.fixture
def untimed_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveServer]:
    # Its repairs are programs of 20 steps on a 1,000-row table: on a busy machine one can
    # pass the default 2 s step limit, so the verdict would depend on load. The server runs
    # in this process; its episodes take the engine's limits untimed here.
    monkeypatch.setattr(episode_module, "default_limits", untimed_limits)
    with LiveServer() as live:
        yield live


# rayyan; and a corpus seed whose 20 sampled tuples include a row the clean table lacks
# (a further report of an entity), which `label` answers with null.
@pytest.mark.timeout(1800)
@pytest.mark.parametrize(
    ("task", "seed"), [("rayyan-labelled", 3), ("corpus_gapminder-labelled", 2)]
)
def test_one_raha_baran_run_is_graded_by_the_environment(
    untimed_server: LiveServer, tmp_path: Path, task: str, seed: int
) -> None:
    out = tmp_path / "raha_baran.json"
    command = [str(RAHA_PYTHON), str(AGENT), "--env-url", untimed_server.url]
    command += ["--task", task, "--seeds", str(seed)]
    run = subprocess.run(
        [*command, "--actions", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=1700,
        cwd=tmp_path,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(out.read_text())
    (result,) = report["runs"]
    assert json.loads(run.stdout.splitlines()[-1]) == result  # its line on stdout
    assert (result["task"], result["seed"], report["seeds"]) == (task, seed, [seed])
    # Its 20 tuples, and no more, came through `label`.
    assert result["labels_used"] == LABEL_BUDGET == len(set(result["labelled_rows"]))
    assert result["operations_applied"] == result["operations"] > 0
    assert result["steps"] <= 30
    assert report["summary"]["f1"]["mean"] == round(result["f1"], 4)

    # The same steps, replayed in-process, are graded to the same figures.
    env = LocalBackend(default_registry(), untimed_limits())
    env.reset(EpisodeKey(task, seed, "train"))
    for action in result["actions"]:
        step = env.step(action)
        assert step.error is None, step.error
    final = env.step({"operation": "finish", "parameters": {}})
    assert final.done and final.repair == {
        name: result[name] for name in ("precision", "recall", "f1", "cells_changed")
    }
    assert result["f1"] > 0.1  # it repairs cells: far from the no-op's 0
