"""The baseline report: a small real run of scripts/baselines.py (every agent over every
family, a chart written), its numbers recomputed from the environment. End to end because it
runs the whole report script; the cheaper baseline checks stay in tests/unit/runner/test_baselines.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dataclean_env.benchmark.stats import bootstrap_interval
from dataclean_env.engine.episode import Episode
from dataclean_env.runner.baselines import baseline_keys, family_of, generated_keys, main
from dataclean_env.tasks import default_registry
from tests.support import ROOT

AGENTS = [
    "noop-baseline",
    "heuristic-baseline",
    "card-free-template",
    "random-baseline",
    "oracle-replay",
]
FAMILIES = ["fixed"] + [s.task_id for s in default_registry().specs() if s.family == "generated"]
REAL_TABLES = [
    s.task_id
    for s in default_registry().specs()
    if s.family == "custom" and s.difficulty == "real" and s.kind == "clean"
]
SEEDS = [0, 1, 2]


@pytest.fixture(autouse=True)
def no_llm_key(monkeypatch) -> None:
    for name in ("HF_TOKEN", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def table_rows(report: str) -> dict[tuple[str, str], list[str]]:
    """(family, agent) -> the other cells of the results table."""
    rows = {}
    for line in report.split("### Real tables")[0].splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 8 and cells[1].startswith("`"):
            rows[(cells[0], cells[1].strip("`"))] = cells[2:]
    return rows


def check_difficulty_rows(report: str, results, registry) -> None:
    """Every pooled difficulty row equals the mean of its episodes in the results file."""
    records = [json.loads(line) for line in results.read_text().splitlines()]
    generated = {
        s.task_id for s in registry.specs() if s.family == "generated" and s.kind == "clean"
    }
    pooled = 0
    for line in report.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != 8 or cells[1] != "all":
            continue
        split, _, level, agent, episodes, mean = cells[:6]
        scores = [
            r["score"]
            for r in records
            if r["split"] == split
            and r["task_id"] in generated
            and r["model"] == agent.strip("`")
            and registry.make(r["task_id"], r["seed"], split).spec.difficulty == level
        ]
        assert (episodes, mean) == (str(len(scores)), f"{np.mean(scores):.4f}")
        pooled += 1
    assert pooled >= len(AGENTS) * 2  # both splits, at least one difficulty each


def test_a_small_baseline_run_writes_a_report_with_recomputable_numbers(registry, tmp_path) -> None:
    results = tmp_path / "episodes.jsonl"
    argv = ["--seeds", "0-2", "--out-dir", str(tmp_path), "--results", str(results)]
    assert main(argv) == 0

    report = (tmp_path / "BASELINES.md").read_text()
    assert f"`uv run python scripts/baselines.py --seeds 0-2 --out-dir {tmp_path}" in report
    rows = table_rows(report)
    assert list(rows) == [(f, a) for f in [*FAMILIES, *REAL_TABLES] for a in AGENTS]
    assert (tmp_path / "baselines.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keys = baseline_keys(registry, SEEDS, "eval")
    test_keys = generated_keys(registry, SEEDS, "test")  # played for the difficulty table
    assert len(results.read_text().splitlines()) == len(AGENTS) * (len(keys) + len(test_keys))
    assert "Generator versions: `fix_types-v2`" in report
    check_difficulty_rows(report, results, registry)

    family = family_of(registry)
    for name in [*FAMILIES, *REAL_TABLES]:
        # No-op: the dirty table's own score, as a fresh episode reports it.
        episodes = [
            Episode("check", registry.make(k.task_id, k.seed, k.split))
            for k in keys
            if family(k.task_id) == name
        ]
        scores = [e.reward.total for e in episodes]
        low, high = bootstrap_interval(scores)
        lost = np.mean([e.task.grader.gold_rows_missing(e.snapshot) for e in episodes])
        assert rows[(name, "noop-baseline")] == [
            str(len(episodes)),
            f"{np.mean(scores):.4f}",
            f"[{low:.4f}, {high:.4f}]",
            "0.0%",
            "0.0%",
            f"{lost:.2f}",
        ]
        means = {agent: float(rows[(name, agent)][1]) for agent in AGENTS}
        assert means["oracle-replay"] == max(means.values())
    assert rows[("fixed", "oracle-replay")] == [
        "12", "0.9999", "[0.9999, 0.9999]", "0.0%", "100.0%", "0.00"
    ]  # fmt: skip
    assert rows[("fixed", "noop-baseline")][1:3] == ["0.0001", "[0.0001, 0.0001]"]

    # The random agent's numbers come from its episodes in the results file.
    records = [json.loads(line) for line in results.read_text().splitlines()]
    # Real tables: precision, recall and F1 in the results and in their own report table.
    assert REAL_TABLES == ["rayyan", "rayyan-labelled"]
    real = [r for r in records if r["task_id"] in REAL_TABLES]
    assert len(real) == len(AGENTS) * len(SEEDS) * len(REAL_TABLES)
    assert all(set(r["repair"]) == {"precision", "recall", "f1", "cells_changed"} for r in real)
    assert all(r["repair"] is None for r in records if r["task_id"] not in REAL_TABLES)
    rayyan = [r for r in real if r["task_id"] == "rayyan"]
    # the heuristic learns from its 20 labels on the labelled variant (its F1 is pinned in
    # tests/unit/agents/test_real_repair.py) and the report shows it
    learned = next(
        line
        for line in report.split("### Real tables")[1].splitlines()
        if line.startswith("| rayyan-labelled | `heuristic-baseline` | visible | 3 | ")
    )
    heuristic_f1 = [
        r["repair"]["f1"]
        for r in real
        if r["task_id"] == "rayyan-labelled" and r["model"] == "heuristic-baseline"
    ]
    assert f"| 3 | {np.mean(heuristic_f1):.4f} | " in learned
    # Above Raha+Baran through the environment with the same 20 labels, on its best seed.
    raha = json.loads((ROOT / "docs" / "raha_baran.json").read_text(encoding="utf-8"))
    assert min(heuristic_f1) > max(run["f1"] for run in raha["runs"])
    # without labels, the repairs the table proves: the same on every seed's row order
    plain = [r["repair"]["f1"] for r in rayyan if r["model"] == "heuristic-baseline"]
    assert plain == [0.11920529801324503] * len(SEEDS)
    random_f1 = [r["repair"]["f1"] for r in rayyan if r["model"] == "random-baseline"]
    low, high = bootstrap_interval(random_f1)
    random_row = next(
        line
        for line in report.split("### Real tables")[1].splitlines()
        if line.startswith("| rayyan | `random-baseline` | visible | 3 | ")
    )
    assert f"| {np.mean(random_f1):.4f} | [{low:.4f}, {high:.4f}] |" in random_row
    assert (
        "| rayyan | `noop-baseline` | visible | 3 | 0.0000 | [0.0000, 0.0000] | 0.0000 | 0.0000 "
        "| 0.0 |" in report
    )
    fixed_random = [
        r for r in records if r["model"] == "random-baseline" and family(r["task_id"]) == "fixed"
    ]
    invalid = sum(r["invalid_actions"] for r in fixed_random) / sum(
        r["steps"] for r in fixed_random
    )
    assert (
        rows[("fixed", "random-baseline")][1]
        == f"{np.mean([r['score'] for r in fixed_random]):.4f}"
    )
    assert rows[("fixed", "random-baseline")][3] == f"{invalid:.1%}"
