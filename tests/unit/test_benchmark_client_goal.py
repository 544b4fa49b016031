"""`scripts/benchmark.py` writes the goal row of one HTTP client against CleanifyAI from
the run's rates, with what the goal leaves the engine of a step."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import benchmark  # noqa: E402


def test_the_client_goal_row_says_what_the_goal_leaves_the_engine() -> None:
    rate = {
        "CleanifyAI": 200.0,  # 10x: 2000 steps/s, 500 µs a step
        "ours, episode ids, step memory off": 1250.0,  # 800 µs a step
        "ours, episode ids, step memory off, engine time taken out": 2500.0,  # 400 µs
        "ours, no ids (default episodes)": 1600.0,
        "ours, episode ids": 2100.0,
        "ours, episode ids, a new instance every episode": 900.0,
    }
    assert benchmark.client_goal_row(rate) == (
        "| one HTTP client vs CleanifyAI | ≥ 10x, every step computed | **6.2x** (episode "
        "ids, the step memory off). The serving path alone (engine time taken out) allows "
        "12.5x: 10x leaves the engine 100 µs of a step's 500, and it takes 400. With the "
        "step memory 8.0x (no ids, as its clients call it) and 10.5x (episode ids), 4.5x "
        "with a new instance every episode (its reset included) |"
    )
