"""Summaries of many episodes: per-group means with a seeded percentile-bootstrap interval."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from dataclean_env.benchmark.results import EpisodeResult
from dataclean_env.grading.reward import CEILING

RESAMPLES = 10_000
BLOCK = 500  # resamples gathered at once
CONFIDENCE = 0.95


def bootstrap_interval(values: Sequence[float], seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the mean: resample the episodes with
    replacement `RESAMPLES` times and take the 2.5th and 97.5th percentiles of the means."""
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(data), size=(RESAMPLES, len(data)))
    # The values gathered a block of resamples at a time (each mean is the same): one
    # RESAMPLES x len(data) array of them is slower to fill than these cache-sized blocks.
    means = np.concatenate(
        [data[picks[start : start + BLOCK]].mean(axis=1) for start in range(0, RESAMPLES, BLOCK)]
    )
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class Summary:
    agent: str
    family: str
    episodes: int
    mean_score: float
    ci_low: float
    ci_high: float
    invalid_rate: float  # invalid actions / actions taken
    exact_rate: float  # episodes ending on a full-table match (score 0.9999)
    mean_rows_lost: float | None  # None when no episode could measure it (remote runs)
    crashed: int
    repair: RepairSummary | None = None  # real tables only


@dataclass(frozen=True)
class RepairSummary:
    """Mean cell-repair figures of a group of real-table episodes."""

    f1: float
    f1_low: float
    f1_high: float
    precision: float
    recall: float
    cells_changed: float


def summarise(results: Iterable[EpisodeResult], family_of: Callable[[str], str]) -> list[Summary]:
    """One summary per (agent, family), in the order the groups first appear."""
    return summarise_by(results, lambda result: family_of(result.task_id))


def summarise_by(
    results: Iterable[EpisodeResult], group_of: Callable[[EpisodeResult], str]
) -> list[Summary]:
    """One summary per (agent, group), in the order the groups first appear; the group's
    label goes in `Summary.family`."""
    groups: dict[tuple[str, str], list[EpisodeResult]] = {}
    for result in results:
        groups.setdefault((result.model, group_of(result)), []).append(result)
    return [_summary(agent, family, group) for (agent, family), group in groups.items()]


def _summary(agent: str, family: str, group: list[EpisodeResult]) -> Summary:
    scores = [r.score for r in group]
    low, high = bootstrap_interval(scores)
    actions = sum(r.steps for r in group)
    lost = [r.rows_lost for r in group if r.rows_lost is not None]
    return Summary(
        agent=agent,
        family=family,
        episodes=len(group),
        mean_score=float(np.mean(scores)),
        ci_low=low,
        ci_high=high,
        invalid_rate=sum(r.invalid_actions for r in group) / actions if actions else 0.0,
        exact_rate=sum(r.score >= CEILING for r in group) / len(group),
        mean_rows_lost=float(np.mean(lost)) if lost else None,
        crashed=sum(r.error is not None for r in group),
        repair=_repair_summary(group),
    )


def _repair_summary(group: list[EpisodeResult]) -> RepairSummary | None:
    figures = [r.repair for r in group if r.repair is not None]
    if not figures:
        return None
    f1 = [f["f1"] for f in figures]
    low, high = bootstrap_interval(f1)
    return RepairSummary(
        f1=float(np.mean(f1)),
        f1_low=low,
        f1_high=high,
        precision=float(np.mean([f["precision"] for f in figures])),
        recall=float(np.mean([f["recall"] for f in figures])),
        cells_changed=float(np.mean([f["cells_changed"] for f in figures])),
    )
