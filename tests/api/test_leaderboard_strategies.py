"""Issue 40's strategies against the board, replayed over real HTTP on a live uvicorn (lite
suite, a token from the admin's own function, the heuristic playing): none of them pays or
locks anyone out. Time is the leaderboard's clock (`Leaderboard.clock`), moved by the test
rather than waited for.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update
from websockets.sync.client import connect

from dataclean_env.errors import InvalidName, InvalidToken
from dataclean_env.leaderboard import tokens
from dataclean_env.leaderboard.names import NAME_LENGTH, board_name
from dataclean_env.leaderboard.tables import records, withdrawals
from dataclean_env.leaderboard.tables import tokens as token_table
from tests.api.test_leaderboard import FINISH, SHOW, board_settings, play_heuristic
from tests.support import LITE_EPISODES, ok
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
    _, token = tokens.create(server.app.state.leaderboard.open(), name, model)
    return {"Authorization": f"Bearer {token}"}


def lite_run(http: httpx.Client, headers: dict[str, str], **body: Any) -> dict[str, Any]:
    return ok(
        http.post(
            "/leaderboard/runs", json={"model": "m", "suite": "lite", **body}, headers=headers
        )
    )


def lite_board(http: httpx.Client) -> dict[str, Any]:
    return ok(http.get("/leaderboard", params={"suite": "lite"}))["verified"]


def test_a_withdrawn_runs_summary_counts_its_unplayed_episodes_as_doing_nothing(
    server: LiveServer, http: httpx.Client
) -> None:
    database = server.app.state.leaderboard.settings.leaderboard_db
    run = lite_run(http, token_for(server, "alice"))
    for episode in run["episodes"][:3]:
        play_heuristic(http, episode["episode_id"])
    withdrawn = admin(database, "run", "withdraw", run["run_id"], "--why", "left half-played")
    assert withdrawn.returncode == 0, withdrawn.stderr
    kept = finished_normalised(server, run["run_id"])
    assert len(kept) == 3 and sum(kept) > 0
    record = ok(http.get(f"/leaderboard/runs/{run['run_id']}"))
    assert (record["status"], record["ranked"]) == ("withdrawn", False)
    # The pooled rule: the 3 played scores over all the run's episodes, the unplayed as nothing.
    episodes = len(run["episodes"])
    assert record["summary"]["episodes"] == episodes == LITE_EPISODES
    assert record["summary"]["normalised"] == round(sum(kept) / episodes, 4)


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
    assert [e["status"] for e in record["episodes"]] == ["finished"] * len(played) + ["open"]
    unranked = lite_board(http)["unranked"]
    assert [(u["run_id"], u["status"]) for u in unranked] == [(run["run_id"], "open")]
    assert "normalised" not in unranked[0]
    # The last is joined, touched and left: then the agent walks away.
    ok(http.post("/reset", json={"episode_id": left}))
    ok(http.post("/step", json={"episode_id": left, **SHOW}))
    clock.now += server.app.state.leaderboard.settings.leaderboard_run_seconds + 1
    server.app.state.leaderboard.sweep()  # the periodic sweep (reads never write)
    shown = lite_board(http)
    [row] = shown["entries"]
    kept = finished_normalised(server, run["run_id"])
    assert len(kept) == len(played) == LITE_EPISODES - 1 and sum(kept) > 0
    assert (row["name"], row["episodes"], row["runs"]) == ("alice", LITE_EPISODES, 1)
    assert (row["runs_started"], row["runs_completed"]) == (1, 0)
    # The last counts as doing nothing: the row is the kept scores over every episode, below
    # the mean of those the agent kept.
    assert (
        row["normalised"] == round(sum(kept) / LITE_EPISODES, 4) < round(sum(kept) / len(kept), 4)
    )
    assert shown["unranked"] == []
    record = ok(http.get(f"/leaderboard/runs/{run['run_id']}"))
    assert record["status"] == "timed_out" and record["ranked"] is True
    assert record["summary"]["normalised"] == row["normalised"]
    assert [e["status"] for e in record["episodes"]] == ["finished"] * len(played) + ["timed_out"]
    assert sorted(e["normalised"] for e in record["episodes"][:-1]) == sorted(kept)


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


# ── one identity, one row ─────────────────────────────────────────────────
def test_renaming_the_model_buys_no_row(server: LiveServer, http: httpx.Client) -> None:
    alice = token_for(server, "alice", "heuristic")
    started = []
    for renamed in ("model-a", "model-b", "heuristic "):  # the last is the bound one, NFKC'd
        answer = http.post(
            "/leaderboard/runs", json={"model": renamed, "suite": "lite"}, headers=alice
        )
        if renamed.strip() == "heuristic":
            started.append(ok(answer))
            assert started[-1]["model"] == "heuristic"
        else:
            assert (answer.status_code, answer.json()["code"]) == (422, "TOKEN_MODEL_MISMATCH")
            assert "'heuristic'" in answer.json()["detail"]
    # Without a model a run plays the token's; both pool into the token's one row.
    started.append(ok(http.post("/leaderboard/runs", json={"suite": "lite"}, headers=alice)))
    assert (started[-1]["name"], started[-1]["model"]) == ("alice", "heuristic")
    for run in started:
        for episode in run["episodes"]:
            ok(http.post("/step", json={"episode_id": episode["episode_id"], **FINISH}))
    shown = lite_board(http)
    [row] = shown["entries"]
    assert (row["name"], row["model"], row["runs"], row["episodes"]) == (
        "alice",
        "heuristic",
        2,
        2 * LITE_EPISODES,
    )
    assert (row["runs_started"], row["runs_completed"]) == (2, 2)


def test_a_token_made_before_models_were_bound_plays_its_first_runs_model(
    server: LiveServer, http: httpx.Client
) -> None:
    engine = server.app.state.leaderboard.open()
    token_id, token = tokens.create(engine, "bob", "placeholder")
    with engine.begin() as connection:  # as migration 0004 leaves a token that never ran
        connection.execute(
            update(token_table).where(token_table.c.token_id == token_id).values(model=None)
        )
    bob = {"Authorization": f"Bearer {token}"}
    nameless = http.post("/leaderboard/runs", json={"suite": "lite"}, headers=bob)
    assert (nameless.status_code, nameless.json()["code"]) == (422, "TOKEN_MODEL_MISMATCH")
    assert ok(http.post("/leaderboard/runs", json={"model": "gpt-x", "suite": "lite"}, headers=bob))
    other = http.post("/leaderboard/runs", json={"model": "gpt-y", "suite": "lite"}, headers=bob)
    assert (other.status_code, other.json()["code"]) == (422, "TOKEN_MODEL_MISMATCH")
    assert [t[2] for t in tokens.listed(engine)] == ["gpt-x"]


def test_one_active_token_per_name_and_model(server: LiveServer) -> None:
    engine = server.app.state.leaderboard.open()
    token_id, token = tokens.create(engine, "carol", "m")
    with pytest.raises(tokens.TokenTaken, match=token_id):
        tokens.create(engine, "carol", "m")
    tokens.create(engine, "carol", "m2")  # another model: another token, another row
    fresh = tokens.rotate(engine, token_id)
    assert fresh is not None and fresh != token
    assert tokens.submitter(engine, fresh, None).token_id == token_id
    with pytest.raises(InvalidToken):
        tokens.submitter(engine, token, None)  # the old secret


def test_migration_0004_binds_each_old_token_to_its_first_runs_model(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    from dataclean_env.leaderboard import db

    engine = db.connect(f"sqlite+pysqlite:///{tmp_path / 'old.sqlite3'}")
    config = Config()
    config.set_main_option("script_location", str(db.MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0003")
        for token_id in ("tok-ran", "tok-idle"):
            connection.exec_driver_sql(
                "INSERT INTO tokens (token_id, name, token_hash, created_at) "
                f"VALUES ('{token_id}', 'team', 'hash-{token_id}', '2026-12-01 00:00:00')"
            )
        for run_id, model, day in (("run-2", "second", 3), ("run-1", "first", 2)):
            connection.exec_driver_sql(
                "INSERT INTO runs (run_id, name, model, client, status, episodes, families, "
                "server_version, generator_version, created_at, token_id, rollouts) VALUES "
                f"('{run_id}', 'team', '{model}', 'c', 'complete', 9, '[]', 's', 'g', "
                f"'2026-12-0{day} 00:00:00', 'tok-ran', 1)"
            )
    db.migrate(engine)
    with engine.connect() as connection:
        bound = dict(connection.execute(select(token_table.c.token_id, token_table.c.model)).all())
    engine.dispose()
    assert bound == {"tok-ran": "first", "tok-idle": None}


# ── revocation withdraws ──────────────────────────────────────────────────
def admin(database: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DCE_LEADERBOARD_DB": str(database)}
    command = [sys.executable, "-m", "dataclean_env.leaderboard.admin", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def withdrawals_of(server: LiveServer) -> list[tuple[str, str, str]]:
    with server.app.state.leaderboard.open().connect() as connection:
        return [
            (r.run_id, r.status_before, r.why)
            for r in connection.execute(select(withdrawals).order_by(withdrawals.c.id))
        ]


def test_revoking_a_token_aborts_its_open_run_and_takes_its_row_off_the_board(
    server: LiveServer, http: httpx.Client
) -> None:
    database = server.app.state.leaderboard.settings.leaderboard_db
    alice, bob = token_for(server, "alice"), token_for(server, "bob")
    done = lite_run(http, alice)
    for episode in done["episodes"]:
        ok(http.post("/step", json={"episode_id": episode["episode_id"], **FINISH}))
    kept = lite_run(http, bob)
    for episode in kept["episodes"]:
        ok(http.post("/step", json={"episode_id": episode["episode_id"], **FINISH}))
    flight = lite_run(http, alice)  # in flight when the token is revoked
    first = flight["episodes"][0]["episode_id"]
    ok(http.post("/reset", json={"episode_id": first}))
    assert [r["name"] for r in lite_board(http)["entries"]] == ["alice", "bob"]
    revoked = admin(database, "token", "revoke", "alice")
    assert revoked.returncode == 0, revoked.stderr
    server.app.state.leaderboard.sweep()  # the serving process's periodic sweep ends it
    shown = lite_board(http)
    assert [r["name"] for r in shown["entries"]] == ["bob"]
    assert [u["run_id"] for u in shown["unranked"]] == []
    refused = http.post("/step", json={"episode_id": first, **SHOW})
    assert (refused.status_code, refused.json()["code"]) == (409, "EPISODE_FINISHED")
    assert "withdrawn" in refused.json()["detail"]
    unplayed = flight["episodes"][1]["episode_id"]
    late = http.post("/reset", json={"episode_id": unplayed})
    assert (late.status_code, late.json()["code"]) == (404, "UNKNOWN_EPISODE")
    record = ok(http.get(f"/leaderboard/runs/{flight['run_id']}"))
    assert record["status"] == "withdrawn" and record["ranked"] is False
    assert record["withdrawn"]["why"].endswith("revoked")
    assert {e["status"] for e in record["episodes"]} == {"withdrawn"}
    # The audit trail keeps both: the records of the complete run, and why it was withdrawn.
    assert len(finished_normalised(server, done["run_id"])) == LITE_EPISODES
    assert sorted(withdrawals_of(server)) == sorted(
        [
            (done["run_id"], "complete", revoked_why(server, "alice")),
            (flight["run_id"], "open", revoked_why(server, "alice")),
        ]
    )


def revoked_why(server: LiveServer, name: str) -> str:
    [token_id] = [t[0] for t in tokens.listed(server.app.state.leaderboard.open()) if t[1] == name]
    return f"token {token_id} revoked"


def test_an_administrator_withdraws_one_run_with_a_reason(
    server: LiveServer, http: httpx.Client
) -> None:
    database = server.app.state.leaderboard.settings.leaderboard_db
    alice = token_for(server, "alice")
    runs = [lite_run(http, alice) for _ in range(2)]
    for run in runs:
        for episode in run["episodes"]:
            ok(http.post("/step", json={"episode_id": episode["episode_id"], **FINISH}))
    [row] = lite_board(http)["entries"]
    assert row["runs"] == 2
    why = "played with the gold tables open"
    withdrawn = admin(database, "run", "withdraw", runs[0]["run_id"], "--why", why)
    assert (withdrawn.returncode, withdrawn.stdout.strip()) == (0, f"withdrew {runs[0]['run_id']}")
    [row] = lite_board(http)["entries"]
    assert (row["runs"], row["runs_started"], row["records"]) == (
        1, 1, [f"/leaderboard/runs/{runs[1]['run_id']}"],
    )  # fmt: skip
    record = ok(http.get(f"/leaderboard/runs/{runs[0]['run_id']}"))
    assert (record["status"], record["withdrawn"]["why"]) == ("withdrawn", why)
    assert withdrawals_of(server) == [(runs[0]["run_id"], "complete", why)]
    again = admin(database, "run", "withdraw", runs[0]["run_id"], "--why", why)
    assert again.returncode == 1 and "no run" in again.stderr
    assert admin(database, "run", "withdraw", runs[1]["run_id"]).returncode == 2  # --why needed


# ── no lockout ────────────────────────────────────────────────────────────
def anonymous_run(http: httpx.Client, address: str) -> httpx.Response:
    """A run without a token from `address` (as the trusted proxy, 127.0.0.1, saw it)."""
    body = {"name": f"anon-{address}", "model": "m", "suite": "lite"}
    return http.post("/leaderboard/runs", json=body, headers={"X-Forwarded-For": address})


def test_many_unplayed_anonymous_runs_lock_no_token_holder_out(
    tmp_path: Path, clock: Clock
) -> None:
    settings = board_settings(
        tmp_path,
        forwarded_allow_ips="127.0.0.1",  # the test plays 11 clients by X-Forwarded-For
        leaderboard_open_runs=2,
        leaderboard_open_anonymous_runs=4,
        leaderboard_open_runs_per_client=2,
    )
    with LiveServer(settings) as live, httpx.Client(base_url=live.url, timeout=120) as http:
        live.app.state.leaderboard.clock = clock
        answers = [anonymous_run(http, f"6.6.6.{n // 2}") for n in range(22)]  # 11 addresses
        assert [a.status_code for a in answers] == [200] * 4 + [503] * 18
        full = answers[4].json()
        assert full["code"] == "SERVER_FULL" and "anonymous" in full["detail"]
        # The anonymous pool is full; the token holders' places are untouched.
        alice = token_for(live, "alice")
        played = lite_run(http, alice)
        ok(http.post("/reset", json={"episode_id": played["episodes"][0]["episode_id"]}))
        lite_run(http, token_for(live, "bob"))  # never played
        refused = http.post("/leaderboard/runs", json={"suite": "lite"}, headers=alice)
        assert (refused.status_code, refused.json()["code"]) == (503, "SERVER_FULL")
        # Unplayed runs expire within minutes of their creation: their places free.
        clock.now += settings.leaderboard_unplayed_run_seconds + 1
        live.app.state.leaderboard.sweep()  # the periodic sweep (reads never write)
        shown = lite_board(http)
        assert [u["run_id"] for u in shown["unranked"]] == [played["run_id"]]  # joined: open
        assert ok(http.get(f"/leaderboard/runs/{answers[0].json()['run_id']}"))["status"] == (
            "expired"
        )
        assert anonymous_run(http, "6.6.6.20").status_code == 200
        assert ok(http.post("/leaderboard/runs", json={"suite": "lite"}, headers=alice))


def test_joined_leaderboard_episodes_free_their_places_at_their_deadline(
    tmp_path: Path, clock: Clock
) -> None:
    # A quota is at most a quarter of its cap: 2 per client of 8. Alice joins 2 episodes;
    # three other holders join 2 each from their own addresses and fill the store.
    settings = board_settings(
        tmp_path, max_episodes=8, episodes_per_client=2, forwarded_allow_ips="127.0.0.1"
    )
    with LiveServer(settings) as live, httpx.Client(base_url=live.url, timeout=120) as http:
        live.app.state.leaderboard.clock = clock
        run = lite_run(http, token_for(live, "alice"))
        first, second, third = (e["episode_id"] for e in run["episodes"][:3])
        for episode_id in (first, second):  # joined by a read, as the client did
            ok(http.get("/state", params={"episode_id": episode_id}))
        for n, holder in enumerate(("bob", "carol", "dave")):
            address = {"X-Forwarded-For": f"7.7.7.{n}"}
            filler = lite_run(http, token_for(live, holder) | address)
            for episode in filler["episodes"][:2]:
                ok(
                    http.get(
                        "/state", params={"episode_id": episode["episode_id"]}, headers=address
                    )
                )
        # The joiner's quota is full: its next join waits for the first deadline.
        quota = http.get("/state", params={"episode_id": third})
        assert (quota.status_code, quota.json()["code"]) == (503, "CLIENT_QUOTA_REACHED")
        assert quota.headers["Retry-After"] == "1800"  # the episodes' deadline, to the second
        # Another client finds the store full; Retry-After says when the first place frees.
        other = {"X-Forwarded-For": "6.6.6.6"}
        body = {"task_id": "easy_dedup_rename", "episode_id": "elsewhere"}
        full = http.post("/reset", json=body, headers=other)
        assert (full.status_code, full.json()["code"]) == (503, "SERVER_FULL")
        clock.now += 600
        full = http.post("/reset", json=body, headers=other)
        assert full.headers["Retry-After"] == "1200"
        clock.now += 1200  # the deadline passes: both places are free, before any sweep
        ok(http.post("/reset", json=body, headers=other))
        ok(http.get("/state", params={"episode_id": third}))


# ── rollouts are independent ──────────────────────────────────────────────
def ws_frame(ws: Any, message: dict[str, Any]) -> dict[str, Any]:
    ws.send(json.dumps(message))
    answer = json.loads(ws.recv(timeout=60))
    assert answer["type"] == "observation", answer
    return dict(answer["data"])


def test_one_rollout_learns_nothing_for_the_next_from_validate_score(
    server: LiveServer, http: httpx.Client
) -> None:
    """The issue's strategy: rollout 1 of an audit instance validates with an absurd count
    and reads `validate_score` to learn how many errors remain; rollout 2 claims that."""
    run = lite_run(http, token_for(server, "alice"), rollouts=2)
    audits = [e["episode_id"] for e in run["episodes"] if e["task_id"] == "audit_pipeline"]
    assert len(audits) == 2 and len(run["episodes"]) == 2 * LITE_EPISODES
    first = audits[0]
    ok(http.post("/reset", json={"episode_id": first}))
    for phase in (
        {"operation": "audit", "parameters": {"categories": ["missing"]}},
        {"operation": "identify", "parameters": {"cells": []}},
        {"operation": "fix", "parameters": {"operations": []}},
    ):
        assert ok(http.post("/step", json={"episode_id": first, **phase}))["reward"] is None
    probe = {"operation": "validate", "parameters": {"issues_remaining": 10000}}
    ended = ok(http.post("/step", json={"episode_id": first, **probe}))  # it ends the episode
    # Rollout 1 has ended, but nothing of its score is shown at any door.
    assert ended["done"] is True
    assert ended["reward"] is None and "_score" not in json.dumps(ended)
    assert "score" not in ended["info"] and ended["info"]["reward_hidden"] is True
    state = ok(http.get("/state", params={"episode_id": first}))
    assert state["reward"] is None and "validate_score" not in json.dumps(state)
    with connect(f"ws://127.0.0.1:{server.port}/ws", open_timeout=120) as ws:
        joined = ws_frame(ws, {"type": "reset", "data": {"episode_id": first}})
        assert joined["done"] is True and joined["reward"] is None
        assert joined["observation"]["score"] is None
        assert joined["observation"]["score_components"] is None
        again = ws_frame(ws, {"type": "step", "data": FINISH})  # a retried finish
        assert again["reward"] is None and "validate_score" not in json.dumps(again)
    record = ok(http.get(f"/leaderboard/runs/{run['run_id']}"))
    assert "validate_score" not in json.dumps(record) and record["summary"] is None
    # Only once the whole run has ended are the scores shown.
    for episode in run["episodes"]:
        if episode["episode_id"] != first:
            ok(http.post("/step", json={"episode_id": episode["episode_id"], **FINISH}))
    final = ok(http.post("/step", json={"episode_id": first, **FINISH}))
    assert final["reward"] == stored_reward(server, first)
    assert 0 < final["reward"]["validate_score"] < 0.01  # 10000 claimed: far from the truth
    assert ok(http.get(f"/leaderboard/runs/{run['run_id']}"))["status"] == "complete"


def stored_reward(server: LiveServer, episode_id: str) -> dict[str, Any]:
    with server.app.state.leaderboard.open().connect() as connection:
        return dict(
            connection.execute(
                select(records.c.components).where(records.c.episode_id == episode_id)
            ).scalar_one()
        )


# ── names by Unicode's security rules (UTS #39) ───────────────────────────
@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("a\u3164b", "U+1160"),  # Hangul filler (NFKC makes it the Jamo filler U+1160)
        ("a\u1160b", "U+1160"),  # Hangul Jungseong filler
        ("a\u2800b", "U+2800"),  # blank Braille pattern
        ("a\u034fb", "U+034F"),  # combining grapheme joiner
        ("h\u0435uristic", "CYRILLIC, LATIN"),  # a Cyrillic U+0435 among Latin letters
        ("team\u2010a", "U+2010"),  # HYPHEN for '-'
        ("\u3164\u1160\u3164", "U+1160"),  # fillers only
        ("-- ..", "a letter or a digit"),
        # all Cyrillic, every letter a look-alike of a Latin one (a whole-script confusable)
        ("\u0430\u04cf\u0456\u0441\u0435", "reads as 'aiice'"),
        ("\u0391\u0392\u0395", "reads as 'ABE'"),  # all Greek
    ],
)
def test_a_name_a_reader_could_not_tell_apart_is_refused(
    http: httpx.Client, name: str, why: str
) -> None:
    for field, body in (
        ("name", {"name": name, "model": "m", "suite": "lite"}),
        ("model", {"name": "anon", "model": name, "suite": "lite"}),
    ):
        refused = http.post("/leaderboard/runs", json=body)
        assert (refused.status_code, refused.json()["code"]) == (422, "INVALID_NAME")
        assert refused.json()["detail"].startswith(f"{field}: ") and why in refused.json()["detail"]
    assert lite_board(http)["unranked"] == []  # nothing was stored


def test_names_in_one_script_or_a_permitted_mix_are_kept(http: httpx.Client) -> None:
    for name in ("Алиса", "山田たろう", "gpt-4o (t=0.7)", "Café", "東京チーム", "Ψυχή"):
        assert (
            ok(
                http.post(
                    "/leaderboard/runs",
                    json={"name": name, "model": "m", "episodes": 1, "families": ["crm"]},
                )
            )["name"]
            == name
        )


def test_a_name_with_another_holders_skeleton_is_refused(
    server: LiveServer, http: httpx.Client
) -> None:
    engine = server.app.state.leaderboard.open()
    tokens.create(engine, "team-l1", "m")
    for look_alike in ("team-I1", "team-ll"):  # I, l and 1 share a skeleton
        with pytest.raises(InvalidName, match="team-l1"):
            tokens.create(engine, look_alike, "m")
        body = {"name": look_alike, "model": "m", "families": ["crm"], "episodes": 1}
        refused = http.post("/leaderboard/runs", json=body)
        assert (refused.status_code, refused.json()["code"]) == (422, "INVALID_NAME")
        assert "'team-l1'" in refused.json()["detail"]
    tokens.create(engine, "team-l1", "m2")  # the holder itself, another model
    tokens.create(engine, "alice", "m")
    look_alike = "\u0430\u04cf\u0456\u0441\u0435"  # all Cyrillic
    with pytest.raises(InvalidName, match="whole-script confusable"):
        board_name(look_alike, "name", NAME_LENGTH)  # as the admin's token command reads it
    refused = http.post("/leaderboard/runs", json={**body, "name": look_alike})
    assert (refused.status_code, refused.json()["code"]) == (422, "INVALID_NAME")
    body = {"name": "team-l1", "model": "m", "families": ["crm"], "episodes": 1}
    assert ok(http.post("/leaderboard/runs", json=body))["anonymous"] is True  # apart
