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


def scored(family: str, normalised: float, raw: float) -> board.Scored:
    return board.Scored(family, "medium", raw, normalised, 3, 0, {})


def test_the_verified_board_pools_a_submitter_model_and_keeps_anonymous_apart() -> None:
    runs = [
        board.RunRow("run-a1", "alice", "m1", False, "complete", 2, 1),
        board.RunRow("run-b", "bob", "m2", False, "complete", 2, 2),
        board.RunRow("run-a2", "alice", "m1", False, "complete", 2, 3),
        board.RunRow("run-c", "carol", "m3", False, "complete", 3, 4),  # a record missing
        board.RunRow("run-d", "dave", "m4", False, "timed_out", 2, 5),  # pooled all the same
        board.RunRow("run-e", "erin", "m5", False, "open", 2, 6),  # listed, never pooled
        board.RunRow("run-a3", "alice", "m1", False, "aborted", 2, 7),  # by its server
        board.RunRow("run-x", "alice", "m1", True, "complete", 2, 6),  # anonymous
    ]
    scores = {
        "run-a1": [scored("crm", 0.5, 0.7), scored("orders", 0.7, 0.8)],
        "run-a2": [scored("crm", 0.9, 0.9), scored("orders", 0.3, 0.6)],
        "run-b": [scored("crm", 0.7, 0.8), scored("crm", 0.5, 0.7)],
        "run-c": [scored("crm", 0.99, 0.99), scored("crm", 0.99, 0.99)],
        # its unfinished episode as the service passes it: doing nothing
        "run-d": [scored("crm", 1.0, 0.99), board.Scored.nothing("crm", "medium")],
        "run-e": [scored("crm", 1.0, 0.99)],
        "run-a3": [scored("crm", 1.0, 0.99)],
        "run-x": [scored("crm", 1.0, 0.99), scored("crm", 1.0, 0.99)],
    }
    named, anonymous, unranked = board.verified(runs, scores, limit=10)
    assert [(e["rank"], e["name"], e["normalised"], e["runs"], e["episodes"]) for e in named] == [
        (1, "alice", 0.6, 2, 4),  # pooled: (0.5 + 0.7 + 0.9 + 0.3) / 4; ties go to the earlier
        (2, "bob", 0.6, 1, 2),
        (3, "dave", 0.5, 1, 2),
    ]
    assert (named[0]["runs_started"], named[0]["runs_completed"]) == (3, 2)
    assert (named[2]["runs_started"], named[2]["runs_completed"], named[2]["raw"]) == (1, 0, 0.99)
    assert named[0]["raw"] == 0.75
    assert named[0]["families"] == {
        "crm": {"normalised": 0.7, "raw": 0.8},
        "orders": {"normalised": 0.5, "raw": 0.7},
    }
    assert named[0]["records"] == ["/leaderboard/runs/run-a1", "/leaderboard/runs/run-a2"]
    assert named[1]["ci_low"] == 0.5 and named[1]["ci_high"] == 0.7
    [apart] = anonymous
    assert (apart["name"], apart["normalised"], "rank" in apart) == ("alice", 1.0, False)
    assert [(u["run_id"], u["status"], u["scored"]) for u in unranked] == [
        ("run-c", "complete", 2),
        ("run-e", "open", 1),
        ("run-a3", "aborted", 1),
    ]


def test_self_reported_board_keeps_each_task_best_score() -> None:
    rows = [("m1", "crm", 0.4), ("m1", "orders", 0.8), ("m2", "crm", 0.5)]
    assert board.self_reported(rows, limit=10) == [
        {"rank": 1, "model_name": "m1", "scores": {"crm": 0.4, "orders": 0.8}, "avg_score": 0.6},
        {"rank": 2, "model_name": "m2", "scores": {"crm": 0.5}, "avg_score": 0.5},
    ]
