"""The normalisation's anchors played again in process: doing nothing normalises to exactly
0 and the reference plan to exactly 1 on a sample of the suite, and the README's claims about
doing nothing and the oracle hold on every task kind. Sweeps of many episodes (the api tier's,
like tests/api/test_benchmark_suite.py); tests/unit/benchmark/test_suite_results.py holds
the stored file's side."""

from __future__ import annotations

import random

import pytest

from dataclean_env.agents.reference import NoOpAgent, OracleAgent
from dataclean_env.benchmark.measure import DRAW_SEED, SECRET, final_score
from dataclean_env.benchmark.normalised import anchors
from dataclean_env.benchmark.suite import Cell, secret_instance, suite_named
from dataclean_env.runner import suite_report
from tests.support import (
    ALL_TASK_IDS,
    CLAIM_TASK_IDS,
    CORPUS_IDS,
    GENERATED_IDS,
    REAL_IDS,
    ROOT,
    TASK_IDS,
)

README = (ROOT / "README.md").read_text(encoding="utf-8")
ROWS = suite_report.load()["episodes"]


def sample() -> list[tuple[Cell, int]]:
    """Every lite instance of a seeded draw, and the first instance of every cell of the
    measured draw of the full suite (the script checks all 780)."""
    lite = suite_named("lite").draw(SECRET, random.Random(DRAW_SEED))
    full = suite_named("full").draw(SECRET, random.Random(DRAW_SEED))
    firsts: dict[Cell, int] = {}
    for cell, index in full:
        firsts.setdefault(cell, index)
    return lite + list(firsts.items())


def test_do_nothing_normalises_to_exactly_0_and_the_oracle_to_exactly_1() -> None:
    # The whole suite, as the script played it (it exits 1 otherwise) ...
    assert all(r["normalised"]["noop"] == 0.0 for r in ROWS)
    assert all(r["normalised"]["oracle"] == 1.0 for r in ROWS)
    # ... and a sample played again here, by the agents the report ships.
    checked = sample()
    assert len(checked) == 10 + 30  # lite: a family each; full: 10 families x 3 difficulties
    for cell, index in checked:

        def make(cell: Cell = cell, index: int = index):
            return secret_instance(cell.family, SECRET, index)

        marks = anchors(make)
        assert marks.oracle - marks.do_nothing > 0.3, cell  # a repair to make
        task = make()
        assert marks.normalise(final_score(make(), NoOpAgent())) == 0.0, cell
        assert marks.normalise(final_score(task, OracleAgent(task.reference_plan))) == 1.0, cell


# The README's claims, word for word, and what each says of every task kind.
DO_NOTHING_CLAIM = (
    "0.0001 on\n  the fixed tasks, the claim tasks and real tables, and between 0.18 and 0.20 on "
    "the\n  generated cleaning families"
)
ORACLE_CLAIM = "The reference plan (what the\n  oracle agent replays) scores 0.9999 on every task."
NORMALISED_CLAIM = (
    "0 for doing nothing and 1 for\n  the reference plan on every instance of every kind"
)


@pytest.mark.parametrize("task_id", ALL_TASK_IDS)
def test_every_readme_claim_about_doing_nothing_and_the_oracle_holds(registry, task_id) -> None:
    for claim in (DO_NOTHING_CLAIM, ORACLE_CLAIM, NORMALISED_CLAIM):
        assert claim in README
    for seed in (0, 1, 2):

        def make(seed: int = seed):
            return registry.make(task_id, seed, "eval")

        marks = anchors(make)
        cleaning = task_id in GENERATED_IDS
        if cleaning:
            assert 0.18 <= marks.do_nothing <= 0.20, (task_id, seed)
        else:
            assert task_id in [*TASK_IDS, *CLAIM_TASK_IDS, *REAL_IDS, *CORPUS_IDS]
            assert marks.do_nothing == 0.0001, (task_id, seed)
        task = make()
        oracle = final_score(task, OracleAgent(task.reference_plan))
        assert oracle == marks.oracle == 0.9999, (task_id, seed)
        assert marks.normalise(final_score(make(), NoOpAgent())) == 0.0
        assert marks.normalise(oracle) == 1.0
