"""Ranking, from stored rows to the boards `GET /leaderboard` shows (pure functions).

Verified, per suite version: one row per submitter identity, pooling every episode of its
closed runs, complete or not (so neither re-running to keep the
best run nor walking away from a bad one helps): an episode the run did not finish counts
as doing nothing (normalised 0, no raw score). The row shows the mean normalised score with
a 95% percentile-bootstrap interval over the pooled episodes
(`benchmark.stats.bootstrap_interval`, seeded, so the same records give the same interval),
the raw mean of the finished episodes beside it, per family and per difficulty, and the
runs started, completed and pooled. An identity is a token (bound to one name and one model
by the administrator: whatever model string a client sends, its runs make one row), or,
for runs without one, the (name, model) they give. Runs under a token and anonymous runs are pooled and
listed apart, never ranked together; open runs, runs the server aborted, and complete runs
not wholly scored under the board's version are listed, not pooled. Self-reported (CleanifyAI's shape): per
model name, the best submitted score of each task and their average.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from dataclean_env.benchmark.stats import bootstrap_interval
from dataclean_env.grading.reward import CEILING

if TYPE_CHECKING:
    from dataclean_env.leaderboard.ranked import RankedEpisode


@dataclass(frozen=True)
class RunRow:
    run_id: str
    name: str
    model: str
    anonymous: bool
    status: str
    episodes: int
    created_at: Any
    rollouts: int = 1  # plays of each drawn instance
    token_id: str | None = None  # None: anonymous

    @property
    def identity(self) -> tuple[bool, str, str]:
        """The row it pools into: its token's; without one, its (name, model)."""
        if self.token_id is not None:
            return (False, self.token_id, "")
        return (self.anonymous, self.name, self.model)


@dataclass(frozen=True)
class Scored:
    """One episode's record, as the boards and the run record use it."""

    family: str
    difficulty: str
    score: float | None  # raw; None: an episode the run did not finish
    normalised: float
    steps: int
    refused: int
    figures: dict[str, Any]

    @classmethod
    def of(cls, row: Any) -> Scored:
        return cls(
            row.family, row.difficulty, row.score, row.normalised if row.normalised is not None
            else 0.0, row.steps, row.refused, row.figures or {},
        )  # fmt: skip

    @classmethod
    def nothing(cls, family: str, difficulty: str) -> Scored:
        """An episode its run did not finish (never joined, timed out): doing nothing."""
        return cls(family, difficulty, None, 0.0, 0, 0, {})


# A closed run is pooled whether or not it finished every episode; an aborted one (its
# server stopped or died) is not: the submitter did not end it.
POOLED = frozenset({"complete", "timed_out"})
# Runs whose record sums up every episode, unplayed ones as doing nothing: the pooled ones,
# and a withdrawn one (off the board, but its record follows the pooled rule).
SUMMED_WHOLE = POOLED | {"withdrawn"}


def figures(episode: RankedEpisode) -> dict[str, Any]:
    """What an ended episode did to the table besides its score: gold rows lost, the share
    of the already-right cells it changed (graders that measure it), an exact match."""
    grader, snapshot = episode.task.grader, episode.snapshot
    preserved = grader.components(snapshot).get("preservation_score")
    return {
        "rows_lost": grader.gold_rows_missing(snapshot),
        "correct_changed": None if preserved is None else round(1.0 - preserved, 6),
        # As the runner counts it (benchmark.stats): `Episode.exact` is true of an untouched
        # error-detection table, whose grader keeps no per-cell scores.
        "exact": episode.reward.total >= CEILING,
    }


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4)


def _raw(episodes: list[Scored]) -> float | None:
    """The raw mean of the finished episodes (an unfinished one has no raw score)."""
    played = [e.score for e in episodes if e.score is not None]
    return _mean(played) if played else None


def scores(episodes: list[Scored]) -> dict[str, Any]:
    """The suite score of `episodes`: normalised mean, its interval, the raw mean."""
    normalised = [e.normalised for e in episodes]
    low, high = _interval(tuple(sorted(normalised)))  # sorted: records come in any order
    return {
        "normalised": _mean(normalised),
        "ci_low": round(low, 4),
        "ci_high": round(high, 4),
        "raw": _raw(episodes),
        "episodes": len(episodes),
    }


def _by(episodes: list[Scored], key: str) -> dict[str, list[Scored]]:
    groups: dict[str, list[Scored]] = {}
    for e in episodes:
        groups.setdefault(getattr(e, key), []).append(e)
    return dict(sorted(groups.items()))


def _rates(group: list[Scored]) -> dict[str, Any]:
    actions = sum(e.steps + e.refused for e in group)
    changed = [e.figures["correct_changed"] for e in group if "correct_changed" in e.figures]
    changed = [value for value in changed if value is not None]
    return {
        "refused_rate": round(sum(e.refused for e in group) / actions, 4) if actions else 0.0,
        "rows_lost": _mean([e.figures.get("rows_lost", 0) for e in group]),
        "correct_changed": _mean(changed) if changed else None,
        "exact_rate": _mean([float(bool(e.figures.get("exact"))) for e in group]),
    }


def summary(episodes: list[Scored]) -> dict[str, Any]:
    """A run record's summary: the suite score, and per family (with the rates of refused
    actions, rows lost, correct cells changed, exact matches) and per difficulty."""
    return {
        **scores(episodes),
        "families": {f: {**scores(g), **_rates(g)} for f, g in _by(episodes, "family").items()},
        "difficulties": {d: scores(g) for d, g in _by(episodes, "difficulty").items()},
    }


def verified(
    runs: Iterable[RunRow], scored: Mapping[str, list[Scored]], limit: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The named rows (ranked), the anonymous rows (apart, unranked) and the runs that are
    not pooled. `scored`: run_id -> its episodes under the board's suite version (a closed
    run's unfinished ones as `Scored.nothing`)."""
    pools: dict[tuple[bool, str, str], list[RunRow]] = {}
    started: dict[tuple[bool, str, str], list[RunRow]] = {}  # every run of an identity
    unranked = []
    for run in sorted(runs, key=lambda r: (r.created_at, r.run_id)):
        rows = scored.get(run.run_id, [])
        key = run.identity
        started.setdefault(key, []).append(run)
        if run.status in POOLED and len(rows) == run.episodes:
            pools.setdefault(key, []).append(run)
        else:  # open, aborted, or not every episode scored under this version
            unranked.append(
                {
                    "run_id": run.run_id,
                    "name": run.name,
                    "model": run.model,
                    "anonymous": run.anonymous,
                    "status": run.status,
                    "episodes": run.episodes,
                    "scored": len(rows),
                    "record": f"/leaderboard/runs/{run.run_id}",
                }
            )
    listed: dict[bool, list[tuple[Any, ...]]] = {False: [], True: []}
    for key, pooled in pools.items():
        episodes = [e for run in pooled for e in scored[run.run_id]]
        entry = {
            # A token's name and model are its own; its first run carries them.
            "name": pooled[0].name,
            "model": pooled[0].model,
            **scores(episodes),
            "runs": len(pooled),
            "runs_started": len(started[key]),
            "runs_completed": sum(run.status == "complete" for run in started[key]),
            # Plays per instance in the pooled runs: with more than one, an instance's
            # episodes are not independent draws, and the interval is over episodes.
            "rollouts": sorted({run.rollouts for run in pooled}),
            "families": {f: _pair(g) for f, g in _by(episodes, "family").items()},
            "difficulties": {d: _pair(g) for d, g in _by(episodes, "difficulty").items()},
            "records": [f"/leaderboard/runs/{run.run_id}" for run in pooled],
        }
        listed[pooled[0].anonymous].append((-entry["normalised"], pooled[0].created_at, entry))
    named, apart = (
        [entry for _, _, entry in sorted(listed[a], key=lambda e: (e[0], e[1]))][:limit]
        for a in (False, True)
    )
    return (
        [{"rank": i + 1, **entry} for i, entry in enumerate(named)],
        apart,
        unranked[-limit:],
    )


def _pair(group: list[Scored]) -> dict[str, float | None]:
    return {
        "normalised": _mean([e.normalised for e in group]),
        "raw": _raw(group),
    }


@lru_cache(maxsize=4096)  # pooled records rarely change: compute an interval once
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
