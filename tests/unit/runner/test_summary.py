"""The runner's closing summary: per task and per family, F1 only for real tables, labels
only for labelled variants, in first-played order."""

from __future__ import annotations

from dataclean_env.benchmark.results import EpisodeResult
from dataclean_env.runner.summary import summary_lines


def result(task_id: str, score: float, f1: float | None = None, labels: int | None = None):
    return EpisodeResult(
        task_id=task_id,
        split="eval",
        seed=0,
        model="m",
        steps=1,
        score=score,
        success=score >= 0.5,
        components={},
        invalid_actions=0,
        rows_lost=None,
        wall_time_s=0.0,
        repair=None if f1 is None else {"f1": f1},
        labels_used=labels,
    )


def test_summary_per_task_and_family() -> None:
    families = {"crm": "generated", "orders": "generated", "rayyan-labelled": "custom"}
    results = [
        result("crm", 0.5),
        result("rayyan-labelled", 0.8, f1=0.8, labels=20),
        result("orders", 0.25),
        result("crm", 0.75),
        result("rayyan-labelled", 0.6, f1=0.6, labels=10),
    ]
    assert summary_lines(results, families.__getitem__) == [
        "5 episodes, mean final score 0.5800",
        "task=crm episodes=2 mean_score=0.6250",
        "task=rayyan-labelled episodes=2 mean_score=0.7000 mean_f1=0.7000 mean_labels_used=15.0",
        "task=orders episodes=1 mean_score=0.2500",
        "family=generated episodes=3 mean_score=0.5000",
        "family=custom episodes=2 mean_score=0.7000 mean_f1=0.7000 mean_labels_used=15.0",
    ]


def test_no_episodes_no_summary() -> None:
    assert summary_lines([], str) == []
