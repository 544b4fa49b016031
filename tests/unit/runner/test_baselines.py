"""Baselines: exact bootstrap intervals, and the heuristic baseline beating the no-op agent on
every family (the report script's own run is tests/e2e/test_baselines_report.py)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.agents.reference import NoOpAgent
from dataclean_env.benchmark.stats import bootstrap_interval
from dataclean_env.benchmark.versions import SUITE_GENERATORS
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.runner.baselines import versions_line
from dataclean_env.runner.loop import run_episode
from dataclean_env.tasks import default_registry
from tests.support import ROOT

FAMILIES = ["fixed"] + [s.task_id for s in default_registry().specs() if s.family == "generated"]
SEEDS = [0, 1, 2]


def test_bootstrap_interval_is_exact_on_small_cases() -> None:
    assert bootstrap_interval([0.4] * 7) == pytest.approx((0.4, 0.4))
    # Two episodes: resampled means are 0, 0.5 and 1 with chances 1/4, 1/2, 1/4.
    assert bootstrap_interval([0.0, 1.0]) == (0.0, 1.0)
    values = np.random.default_rng(5).random(50)
    low, high = bootstrap_interval(values)
    assert low < values.mean() < high
    assert bootstrap_interval(values) == (low, high)  # seeded: the same every time


@pytest.mark.parametrize("family", FAMILIES)
def test_the_heuristic_beats_the_noop_agent_on_every_family(registry, family) -> None:
    tasks = [s.task_id for s in registry.specs() if family in (s.task_id, s.family)]
    env, silent = LocalBackend(registry), io.StringIO()
    scores: dict[str, list[float]] = {"noop": [], "heuristic": []}
    for key in (EpisodeKey(t, seed, "eval") for t in tasks for seed in SEEDS):
        scores["noop"].append(run_episode(env, NoOpAgent(), key, out=silent).score)
        scores["heuristic"].append(run_episode(env, HeuristicAgent(), key, out=silent).score)
    assert np.mean(scores["heuristic"]) > np.mean(scores["noop"]), scores


def test_the_report_names_the_version_of_every_generator_the_suite_plays() -> None:
    line = versions_line()
    assert line.count("`") == 2 * len(SUITE_GENERATORS)
    assert "`error_detection-v1`" in line and "`crm-v2`" in line
    assert line in (ROOT / "docs" / "BASELINES.md").read_text(encoding="utf-8").splitlines()
