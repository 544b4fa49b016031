"""A leaderboard episode (`RankedEpisode`), the board's ranking in
process (no web stack, no database)."""

from __future__ import annotations

import pytest

from dataclean_env.errors import EpisodeFinished, InvalidParameters, UnknownOperation
from dataclean_env.leaderboard import board
from dataclean_env.leaderboard.ranked import MAX_TRACE_BYTES, RankedEpisode
from dataclean_env.schemas import Action
from dataclean_env.tasks.generated import secret_task

SECRET = b"unit-test-secret"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def ranked(deadline: float = 1e9, clock: Clock | None = None) -> tuple[RankedEpisode, list]:
    ended: list[tuple[str, float]] = []
    episode = RankedEpisode(
        "lb-test",
        secret_task("fix_types", SECRET, 1),
        deadline,
        lambda e: ended.append((e.status, e.reward.total)),
        clock=clock or Clock(),
    )
    return episode, ended


def test_it_is_blind_and_records_its_end_once_with_the_trace() -> None:
    episode, ended = ranked()
    assert episode.blind
    episode.step(Action(operation="validate_schema"))
    result = episode.step(Action(operation="finish"))
    assert result.done and episode.status == "finished"
    assert ended == [("finished", result.reward.total)]
    assert episode.trace == [
        {"operation": "validate_schema", "parameters": {}},
        {"operation": "finish", "parameters": {}},
    ]
    with pytest.raises(EpisodeFinished):
        episode.step(Action(operation="validate_schema"))
    assert len(ended) == 1


def test_refused_actions_stay_out_of_the_trace_and_are_bounded() -> None:
    episode, ended = ranked()
    for _ in range(episode.spec.max_steps - 1):
        with pytest.raises(UnknownOperation):
            episode.step(Action(operation="no_such_operation"))
    assert episode.trace == [] and ended == []
    with pytest.raises(UnknownOperation):
        episode.step(Action(operation="no_such_operation"))
    assert episode.done and episode.refusals == episode.spec.max_steps
    assert ended == [("finished", episode.reward.total)]


def test_the_deadline_times_it_out() -> None:
    clock = Clock()
    episode, ended = ranked(deadline=150.0, clock=clock)
    episode.step(Action(operation="validate_schema"))
    clock.now = 150.5
    with pytest.raises(EpisodeFinished, match="timed_out"):
        episode.step(Action(operation="finish"))
    assert ended == [("timed_out", episode.reward.total)]
    assert episode.trace == [{"operation": "validate_schema", "parameters": {}}]


def test_the_trace_is_bounded_in_bytes() -> None:
    episode, _ = ranked()
    big = {"column": "x" * (MAX_TRACE_BYTES + 1)}
    with pytest.raises(InvalidParameters, match="trace"):
        episode.step(Action(operation="validate_schema", parameters=big))
    assert episode.step_count == 0 and episode.refusals == 0


def test_verified_board_ranks_complete_runs_by_mean() -> None:
    runs = [
        board.RunRow("run-a", "alice", "m1", 2, 1),
        board.RunRow("run-b", "bob", "m2", 2, 2),
        board.RunRow("run-c", "carol", "m3", 3, 3),  # one record missing: not on the board
    ]
    scores = {
        "run-a": [("crm", 0.5), ("orders", 0.7)],
        "run-b": [("crm", 0.9), ("crm", 0.8)],
        "run-c": [("crm", 0.99), ("crm", 0.99)],
    }
    entries = board.verified(runs, scores, limit=10)
    assert [(e["rank"], e["run_id"], e["mean"]) for e in entries] == [
        (1, "run-b", 0.85),
        (2, "run-a", 0.6),
    ]
    assert entries[1]["families"] == {"crm": 0.5, "orders": 0.7}
    assert entries[0]["ci_low"] == 0.8 and entries[0]["ci_high"] == 0.9
    assert entries[0]["episodes"] == 2


def test_self_reported_board_keeps_each_task_best_score() -> None:
    rows = [("m1", "crm", 0.4), ("m1", "orders", 0.8), ("m2", "crm", 0.5)]
    assert board.self_reported(rows, limit=10) == [
        {"rank": 1, "model_name": "m1", "scores": {"crm": 0.4, "orders": 0.8}, "avg_score": 0.6},
        {"rank": 2, "model_name": "m2", "scores": {"crm": 0.5}, "avg_score": 0.5},
    ]
