"""Ranking, from stored rows to the boards `GET /leaderboard` shows (pure functions).

Verified: one entry per complete run with a record for each of its episodes under the
board's grader version; ranked by mean score, with a 95% percentile-bootstrap interval
(`runner.stats.bootstrap_interval`, seeded, so the same records give the same interval),
the mean per family and the episode count. Self-reported (CleanifyAI's shape): per model
name, the best submitted score of each task and their average.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dataclean_env.runner.stats import bootstrap_interval


@dataclass(frozen=True)
class RunRow:
    run_id: str
    name: str
    model: str
    episodes: int
    created_at: Any


def verified(
    runs: Iterable[RunRow], scores: Mapping[str, list[tuple[str, float]]], limit: int
) -> list[dict[str, Any]]:
    """`scores`: run_id -> [(family, score)] of its records under one grader version."""
    entries = []
    for run in runs:
        rows = scores.get(run.run_id, [])
        if not rows or len(rows) != run.episodes:
            continue  # not every episode scored under this version (yet)
        values = [score for _, score in rows]
        low, high = _interval(tuple(values))
        families: dict[str, list[float]] = {}
        for family, score in rows:
            families.setdefault(family, []).append(score)
        entries.append(
            (
                -sum(values) / len(values),
                run.created_at,
                {
                    "name": run.name,
                    "model": run.model,
                    "mean": round(sum(values) / len(values), 4),
                    "ci_low": round(low, 4),
                    "ci_high": round(high, 4),
                    "episodes": len(values),
                    "families": {f: round(sum(v) / len(v), 4) for f, v in sorted(families.items())},
                    "run_id": run.run_id,
                },
            )
        )
    entries.sort(key=lambda e: (e[0], e[1]))
    return [{"rank": i + 1, **entry} for i, (_, _, entry) in enumerate(entries[:limit])]


@lru_cache(maxsize=4096)  # a complete run's records never change: compute its interval once
def _interval(values: tuple[float, ...]) -> tuple[float, float]:
    return bootstrap_interval(values)


def self_reported(best: Iterable[tuple[str, str, float]], limit: int) -> list[dict[str, Any]]:
    """`best`: (model_name, task_id, best score) rows."""
    models: dict[str, dict[str, float]] = {}
    for model_name, task_id, score in best:
        models.setdefault(model_name, {})[task_id] = round(float(score), 4)
    ranked = sorted(
        ((sum(s.values()) / len(s), name, s) for name, s in models.items()),
        key=lambda e: (-e[0], e[1]),
    )
    return [
        {
            "rank": i + 1,
            "model_name": name,
            "scores": dict(sorted(scores.items())),
            "avg_score": round(avg, 4),
        }
        for i, (avg, name, scores) in enumerate(ranked[:limit])
    ]
