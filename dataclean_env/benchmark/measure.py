"""Measure a suite: the built-in heuristic on one seeded draw of it, normalised, with the
95% bootstrap interval of its suite score, written beside the suite definition.

    python -m dataclean_env.benchmark.measure          # writes suites/interval.json

The draw is seeded (`SECRET`, `DRAW_SEED`), so the file is reproducible; a test checks it
names the current definition and replays some of its episodes to the same scores.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from typing import Any

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.agents.protocol import Agent
from dataclean_env.benchmark.normalised import Anchors, anchors
from dataclean_env.benchmark.stats import bootstrap_interval
from dataclean_env.benchmark.suite import DEFINITION, Cell, secret_instance, suite_named
from dataclean_env.engine.doors import attempt
from dataclean_env.engine.episode import Episode
from dataclean_env.table.limits import untimed_limits
from dataclean_env.tasks.generated import GENERATOR_VERSIONS
from dataclean_env.tasks.registry import Task

INTERVAL = DEFINITION.parent / "interval.json"
SECRET = b"suite-interval-measurement"
DRAW_SEED = 0
TARGET_HALF_WIDTH = 0.02


def definition_digest() -> str:
    """What the measurement depends on: the suite file and the generators' versions."""
    text = DEFINITION.read_text(encoding="utf-8") + json.dumps(GENERATOR_VERSIONS, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def final_score(task: Task, agent: Agent) -> float:
    """The final score of `agent` on `task`, played in-process (refused actions count
    toward a cap of twice the step budget, as the runner's loop allows), untimed like the
    anchors so that the machine's load cannot move it."""
    episode = Episode("measure", task, untimed_limits())
    result = episode.result()
    for _ in range(2 * task.spec.max_steps + 2):
        if result.done:
            break
        result = attempt(episode, agent.act(result.observation.model_dump(mode="json")))
    return episode.score


def normalised(marks: Anchors, final: float) -> float:
    """The normalised score as the suite files store it (6 places)."""
    return round(marks.normalise(final), 6)


def unclipped(marks: Anchors, final: float) -> float:
    """The normalised score before its clip to [0, 1], as the suite files store it."""
    return round(marks.unclipped(final), 6)


def normalised_heuristic(cell: Cell, index: int) -> float:
    marks = anchors(lambda: secret_instance(cell.family, SECRET, index))
    task = secret_instance(cell.family, SECRET, index)
    return normalised(marks, final_score(task, HeuristicAgent()))


def measure(suite_name: str = "full") -> dict[str, Any]:
    suite = suite_named(suite_name)
    episodes: list[list[Any]] = []
    scores: list[float] = []
    for cell, index in suite.draw(SECRET, random.Random(DRAW_SEED)):
        scores.append(normalised_heuristic(cell, index))
        episodes.append([cell.family, cell.difficulty, str(index), scores[-1]])
    low, high = bootstrap_interval(scores)
    return {
        "suite_version": suite.version,
        "definition_digest": definition_digest(),
        "agent": "heuristic",
        "episodes": len(scores),
        "mean": round(sum(scores) / len(scores), 4),
        "ci_low": round(low, 4),
        "ci_high": round(high, 4),
        "half_width": round((high - low) / 2, 4),
        "target_half_width": TARGET_HALF_WIDTH,
        "scores": episodes,
    }


def main(argv: list[str] | None = None) -> int:
    result = measure()
    INTERVAL.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(
        f"{result['suite_version']}: heuristic {result['mean']} "
        f"[{result['ci_low']}, {result['ci_high']}], ±{result['half_width']} "
        f"over {result['episodes']} episodes"
    )
    return 0 if result["half_width"] <= TARGET_HALF_WIDTH else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
