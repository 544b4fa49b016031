"""`scripts/trainer_load.py` writes the trainers' section and goal row of docs/BENCHMARKS.md
from the run's measures; its episodes share instances within a GRPO group only."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import trainer_load  # noqa: E402

pytestmark = pytest.mark.unit

OURS = {
    "sessions": 256,
    "steps": 2048,
    "rate": 600.0,
    "p50_ms": 300.04,
    "p99_ms": 1200.0,
    "cpu_ms": 1.234,
}
ECHO = {
    "sessions": 256,
    "steps": 2048,
    "rate": 1000.0,
    "p50_ms": 20.0,
    "p99_ms": 90.55,
    "cpu_ms": 0.5,
}


def test_the_goal_row_is_ours_as_a_share_of_the_echo() -> None:
    assert trainer_load.goal_row(OURS, ECHO) == (
        "| 256 /ws sessions from one host vs OpenEnv's echo | ≥ 50% | **60%** "
        "(600 vs 1000 steps/s) |"
    )


def test_the_section_puts_both_servers_side_by_side_and_the_floor_beside_the_engine() -> None:
    lines = trainer_load.section(OURS, ECHO, {"ours": 12.34, "floor": 400.0})
    assert lines[0] == "## Trainers: 256 /ws sessions from one host"
    assert "| ours, generated families | 256 | 2048 | 600 | 300.0 | 1200.0 | 1.23 |" in lines
    assert "| OpenEnv echo | 256 | 2048 | 1000 | 20.0 | 90.5 | 0.50 |" in lines
    assert "Ours runs at **60%** of the echo's rate (goal ≥ 50%)." in lines
    assert lines[-3:] == ["| `DataCleaningEnv` | 12.3 |", "| pandas copy (floor) | 400.0 |", ""]


def test_sessions_of_one_grpo_group_play_the_same_instances_and_groups_differ() -> None:
    first, same, other = (trainer_load.generated_episodes(2, s, group=2) for s in (0, 1, 2))
    assert (
        [e.reset for e in first]
        == [e.reset for e in same]
        == [
            {"task_id": "fix_types", "seed": 0, "split": "train"},
            {"task_id": "normalize_dedupe", "seed": 1, "split": "train"},
        ]
    )
    assert [e.reset for e in other] == [
        {"task_id": "normalize_dedupe", "seed": 1000, "split": "train"},
        {"task_id": "full_pipeline", "seed": 1001, "split": "train"},
    ]
    assert all(e.steps for e in first + other)
    echo = trainer_load.echo_episodes(first)
    assert [len(e.steps) for e in echo] == [len(e.steps) for e in first]
