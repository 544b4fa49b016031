"""Issue 40's strategies against the board, replayed over real HTTP on a live uvicorn (lite
suite, a token from the admin's own function, the heuristic playing): none of them pays or
locks anyone out. Time is the leaderboard's clock (`Leaderboard.clock`), moved by the test
rather than waited for.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from dataclean_env.leaderboard import tokens
from dataclean_env.leaderboard.tables import records
from tests.api.test_leaderboard import FINISH, SHOW, board_settings, play_heuristic
from tests.support import ok
from tests.web import LiveServer


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def server(tmp_path: Path, clock: Clock) -> Iterator[LiveServer]:
    with LiveServer(board_settings(tmp_path)) as live:
        live.app.state.leaderboard.clock = clock
        yield live


@pytest.fixture
def http(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        yield client


def token_for(server: LiveServer, name: str, model: str = "m") -> dict[str, str]:
    _, token = tokens.create(server.app.state.leaderboard.open(), name)
    return {"Authorization": f"Bearer {token}"}


def lite_run(http: httpx.Client, headers: dict[str, str], **body: Any) -> dict[str, Any]:
    return ok(
        http.post("/leaderboard/runs", json={"model": "m", "suite": "lite", **body}, headers=headers)
    )


def lite_board(http: httpx.Client) -> dict[str, Any]:
    return ok(http.get("/leaderboard", params={"suite": "lite"}))["verified"]


def finished_normalised(server: LiveServer, run_id: str) -> list[float]:
    with server.app.state.leaderboard.open().connect() as connection:
        return list(
            connection.execute(
                select(records.c.normalised).where(
                    records.c.run_id == run_id, records.c.status == "finished"
                )
            ).scalars()
        )


# ── every started run counts ──────────────────────────────────────────────
def test_walking_away_from_a_run_counts_its_unfinished_episode_as_doing_nothing(
    server: LiveServer, http: httpx.Client, clock: Clock
) -> None:
    alice = token_for(server, "alice")
    run = lite_run(http, alice)
    *played, left = (e["episode_id"] for e in run["episodes"])
    for episode_id in played:
        last = play_heuristic(http, episode_id)
        # The episode has ended, but no score of the run is shown before the run ends.
        assert last["done"] is True and last["reward"] is None, last
        assert last["info"]["reward_hidden"] is True
        state = ok(http.get("/state", params={"episode_id": episode_id}))
        assert (state["done"], state["reward"]) == (True, None)
    record = ok(http.get(f"/leaderboard/runs/{run['run_id']}"))
    assert record["status"] == "open"
    assert (record["summary"], record["mean"]) == (None, None)
    assert {(e["score"], e["normalised"]) for e in record["episodes"]} == {(None, None)}
    assert [e["status"] for e in record["episodes"]] == ["finished"] * 8 + ["open"]
    unranked = lite_board(http)["unranked"]
    assert [(u["run_id"], u["status"]) for u in unranked] == [(run["run_id"], "open")]
    assert "normalised" not in unranked[0]
    # The ninth is joined, touched and left: then the agent walks away.
    ok(http.post("/reset", json={"episode_id": left}))
    ok(http.post("/step", json={"episode_id": left, **SHOW}))
    clock.now += server.app.state.leaderboard.settings.leaderboard_run_seconds + 1
    shown = lite_board(http)
    [row] = shown["entries"]
    kept = finished_normalised(server, run["run_id"])
    assert len(kept) == 8 and sum(kept) > 0
    assert (row["name"], row["episodes"], row["runs"]) == ("alice", 9, 1)
    assert (row["runs_started"], row["runs_completed"]) == (1, 0)
    # The ninth counts as doing nothing: the row is the 8 scores over 9 episodes, below
    # the mean of the 8 the agent kept.
    assert row["normalised"] == round(sum(kept) / 9, 4) < round(sum(kept) / 8, 4)
    assert shown["unranked"] == []
    record = ok(http.get(f"/leaderboard/runs/{run['run_id']}"))
    assert record["status"] == "timed_out" and record["ranked"] is True
    assert record["summary"]["normalised"] == row["normalised"]
    assert [e["status"] for e in record["episodes"]] == ["finished"] * 8 + ["timed_out"]
    assert sorted(e["normalised"] for e in record["episodes"][:8]) == sorted(kept)


def test_the_last_finish_of_a_run_shows_the_scores(server: LiveServer, http: httpx.Client) -> None:
    run = lite_run(http, token_for(server, "alice"))
    *first, last = (e["episode_id"] for e in run["episodes"])
    for episode_id in first:
        ended = ok(http.post("/step", json={"episode_id": episode_id, **FINISH}))
        assert ended["done"] is True and ended["reward"] is None
    final = ok(http.post("/step", json={"episode_id": last, **FINISH}))
    assert final["done"] is True and final["reward"]["total"] > 0  # the run is complete
    again = ok(http.post("/step", json={"episode_id": first[0], **FINISH}))  # retried finish
    assert again["reward"]["total"] > 0
    record = ok(http.get(f"/leaderboard/runs/{run['run_id']}"))
    assert record["status"] == "complete" and record["summary"]["normalised"] == 0.0
