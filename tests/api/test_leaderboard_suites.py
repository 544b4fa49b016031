"""Suite runs on the leaderboard (the `lite` suite: 10 episodes, one per family): only a run
that finished its whole suite is ranked; a submitter's runs of one model pool into one row;
submitter tokens (made by the admin command, sent over real HTTP); anonymous runs apart;
open-run shares; a run whose server died aborted at the next start; versions and the audit.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from dataclean_env.benchmark.stats import bootstrap_interval
from dataclean_env.benchmark.versions import (
    GENERATOR_VERSION,
    GRADER_VERSION,
    SUITE_GENERATORS,
    generator_version,
    suite_version,
)
from dataclean_env.leaderboard import tokens
from dataclean_env.leaderboard.audit import rescore, verify
from dataclean_env.leaderboard.tables import holders, records, run_episodes
from dataclean_env.leaderboard.tables import tokens as token_table
from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings
from tests.api.test_leaderboard import FINISH, board_settings, play_heuristic, step
from tests.support import ROOT, ok
from tests.web import LiveServer

LITE = suite_version("dce-suite-2-lite")
LITE_FAMILIES = [
    "audit_pipeline", "corpus", "crm", "error_detection", "fix_types", "full_pipeline", "inventory",
    "normalize_dedupe", "orders", "standardisation",
]  # fmt: skip
CLEANING = {"fix_types", "normalize_dedupe", "full_pipeline", "crm", "orders", "inventory"}


@pytest.fixture
def board(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(board_settings(tmp_path))) as client:
        yield client


def token_for(client: TestClient, name: str, model: str = "m") -> dict[str, str]:
    _, token = tokens.create(client.app.state.leaderboard.open(), name, model)
    return {"Authorization": f"Bearer {token}"}


def lite_run(client: TestClient, headers: dict[str, str] | None = None, **body: Any) -> dict:
    answer = client.post(
        "/leaderboard/runs", json={"model": "m", "suite": "lite", **body}, headers=headers or {}
    )
    return ok(answer)


def finish_all(client: TestClient, run: dict, leave: int = 0) -> None:
    for e in run["episodes"][: len(run["episodes"]) - leave]:
        step(client, e["episode_id"], FINISH)


def lite_board(client: TestClient, **params: str) -> dict[str, Any]:
    return ok(client.get("/leaderboard", params={"suite": "lite", **params}))["verified"]


def stored_normalised(client: TestClient, run_ids: list[str]) -> list[float]:
    with client.app.state.leaderboard.open().connect() as connection:
        return list(
            connection.execute(
                select(records.c.normalised).where(records.c.run_id.in_(run_ids))
            ).scalars()
        )


# ── what is ranked ─────────────────────────────────────────────────────────
def test_only_a_run_that_finished_its_whole_suite_is_ranked(board: TestClient) -> None:
    alice = token_for(board, "alice")
    whole = lite_run(board, alice)
    assert (whole["suite"], whole["suite_version"], whole["anonymous"]) == ("lite", LITE, False)
    assert sorted(e["task_id"] for e in whole["episodes"]) == LITE_FAMILIES
    assert {e["difficulty"] for e in whole["episodes"]} == {"medium"}
    finish_all(board, whole)
    practice = ok(
        board.post(
            "/leaderboard/runs",
            json={"model": "m", "families": ["crm"], "episodes": 1},
            headers=alice,
        )
    )
    finish_all(board, practice)  # a 1-episode run, complete: never ranked
    partial = lite_run(board, alice)
    finish_all(board, partial, leave=1)
    shown = lite_board(board)
    assert shown["suite_version"] == LITE and shown["title"].startswith(LITE)
    [row] = shown["entries"]
    assert (row["rank"], row["name"], row["model"], row["runs"], row["episodes"]) == (
        1, "alice", "m", 1, 10,
    )  # fmt: skip
    # Doing nothing normalises to 0 on every instance; the raw score is beside it.
    assert (row["normalised"], row["ci_low"], row["ci_high"]) == (0.0, 0.0, 0.0)
    assert 0.0 < row["raw"] < 0.5
    assert sorted(row["families"]) == LITE_FAMILIES
    assert list(row["difficulties"]) == ["medium"]
    assert row["records"] == [f"/leaderboard/runs/{whole['run_id']}"]
    [listed] = shown["unranked"]
    assert (listed["run_id"], listed["status"], listed["scored"]) == (partial["run_id"], "open", 9)
    assert shown["anonymous"] == []
    assert ok(board.get("/leaderboard"))["verified"]["entries"] == []  # the full suite's board


def test_five_runs_of_one_submitter_and_model_make_one_pooled_row(board: TestClient) -> None:
    alice, bob = token_for(board, "alice"), token_for(board, "bob")
    runs = []
    for n in range(5):  # run n: the heuristic on n cleaning episodes, the rest left undone
        run = lite_run(board, alice)
        played = 0
        for e in run["episodes"]:
            if e["task_id"] in CLEANING and played < n:
                play_heuristic(board, e["episode_id"])
                played += 1
            else:
                step(board, e["episode_id"], FINISH)
        runs.append(run["run_id"])
    other = lite_run(board, bob)
    finish_all(board, other)
    values = stored_normalised(board, runs)
    assert len(values) == 50 and max(values) > 0
    low, high = bootstrap_interval(sorted(values))
    first, second = lite_board(board)["entries"]
    assert (first["name"], first["runs"], first["episodes"]) == ("alice", 5, 50)
    assert first["normalised"] == round(sum(values) / 50, 4)
    assert (first["ci_low"], first["ci_high"]) == (round(low, 4), round(high, 4))
    assert first["records"] == [f"/leaderboard/runs/{r}" for r in runs]
    assert (second["rank"], second["name"], second["runs"]) == (2, "bob", 1)


def test_several_rollouts_per_instance_are_played_and_reported_as_such(
    board: TestClient,
) -> None:
    alice = token_for(board, "alice")
    run = lite_run(board, alice, rollouts=2)
    episodes = run["episodes"]
    assert run["rollouts"] == 2 and len(episodes) == 2 * len(LITE_FAMILIES)
    # Each drawn instance twice in a row: the same family and difficulty, two episode ids.
    pairs = list(zip(episodes[::2], episodes[1::2], strict=True))
    assert sorted(a["task_id"] for a, _ in pairs) == LITE_FAMILIES
    assert all((a["task_id"], a["difficulty"]) == (b["task_id"], b["difficulty"]) for a, b in pairs)
    with board.app.state.leaderboard.open().connect() as connection:
        hashes = [
            h
            for (h,) in connection.execute(
                select(run_episodes.c.instance_hash)
                .where(run_episodes.c.run_id == run["run_id"])
                .order_by(run_episodes.c.position)
            )
        ]
    assert hashes[::2] == hashes[1::2] and len(set(hashes)) == len(LITE_FAMILIES)
    finish_all(board, run, leave=1)
    assert lite_board(board)["entries"] == []  # one rollout left: not complete
    step(board, episodes[-1]["episode_id"], FINISH)
    (entry,) = lite_board(board)["entries"]
    assert (entry["runs"], entry["episodes"], entry["rollouts"]) == (1, 20, [2])
    record = ok(board.get(f"/leaderboard/runs/{run['run_id']}"))
    assert (record["rollouts"], record["status"], record["ranked"]) == (2, "complete", True)
    once = lite_run(board, alice)
    finish_all(board, once)
    (pooled,) = lite_board(board)["entries"]
    assert (pooled["runs"], pooled["episodes"], pooled["rollouts"]) == (2, 30, [1, 2])
    for wrong in (0, 9):
        answer = board.post(
            "/leaderboard/runs",
            json={"model": "m", "suite": "lite", "rollouts": wrong},
            headers=alice,
        )
        assert answer.status_code == 422 and answer.json()["code"] == "INVALID_SUBMISSION"


def test_anonymous_runs_never_rank_with_named_ones(board: TestClient) -> None:
    named = lite_run(board, token_for(board, "alice"))
    finish_all(board, named)
    anonymous = lite_run(board, name="alice")  # the same name, without a token
    assert anonymous["anonymous"] is True
    for e in anonymous["episodes"]:
        if e["task_id"] in CLEANING:
            play_heuristic(board, e["episode_id"])  # better than the named run
        else:
            step(board, e["episode_id"], FINISH)
    shown = lite_board(board)
    [row] = shown["entries"]
    assert row["records"] == [f"/leaderboard/runs/{named['run_id']}"]
    [apart] = shown["anonymous"]
    assert apart["records"] == [f"/leaderboard/runs/{anonymous['run_id']}"]
    assert "rank" not in apart and apart["normalised"] > row["normalised"]


def test_one_submitter_holds_at_most_its_share_of_open_runs(tmp_path: Path) -> None:
    settings = board_settings(tmp_path, leaderboard_open_runs_per_client=2)
    with TestClient(create_app(settings)) as client:
        alice = token_for(client, "alice")
        lite_run(client, alice)
        lite_run(client, alice)
        third = client.post("/leaderboard/runs", json={"model": "m"}, headers=alice)
        assert (third.status_code, third.json()["code"]) == (503, "CLIENT_QUOTA_REACHED")
        assert third.headers["Retry-After"] == "30"
        lite_run(client, token_for(client, "bob"))  # another token, from the same address
        lite_run(client, name="anon")  # anonymous: the address's own share
        lite_run(client, name="anon")
        refused = client.post("/leaderboard/runs", json={"name": "anon", "model": "m"})
        assert (refused.status_code, refused.json()["code"]) == (503, "CLIENT_QUOTA_REACHED")


# ── the run record ─────────────────────────────────────────────────────────
def test_a_run_record_names_its_versions_the_agent_and_its_rates(board: TestClient) -> None:
    agent = {"prompt": "You clean tables.", "temperature": 0.7, "step_budget": 12}
    run = lite_run(board, token_for(board, "alice", "gpt-x"), model="gpt-x", agent=agent)
    finish_all(board, run)
    record = ok(board.get(f"/leaderboard/runs/{run['run_id']}"))
    assert (record["status"], record["ranked"], record["anonymous"]) == ("complete", True, False)
    assert (record["suite"], record["suite_version"]) == ("dce-suite-2-lite", LITE)
    assert (record["grader_version"], record["generator_version"]) == (
        GRADER_VERSION, GENERATOR_VERSION,
    )  # fmt: skip
    assert record["declared"] == {"model": "gpt-x", **agent}
    assert record["step_budgets"]["crm"] == 30 and sorted(record["step_budgets"]) == LITE_FAMILIES
    summary = record["summary"]
    assert (summary["normalised"], summary["episodes"]) == (0.0, 10)
    for family, figures in summary["families"].items():
        assert (figures["refused_rate"], figures["rows_lost"], figures["exact_rate"]) == (
            0.0, 0.0, 0.0,
        ), family  # fmt: skip
        assert figures["correct_changed"] == (0.0 if family in CLEANING else None), family
    assert [e["normalised"] for e in record["episodes"]] == [0.0] * 10


# ── tokens over the wire ───────────────────────────────────────────────────
def admin(database: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DCE_LEADERBOARD_DB": str(database)}
    env.pop("DATABASE_URL", None)
    command = [sys.executable, "-m", "dataclean_env.leaderboard.admin", *args]
    return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_tokens_made_listed_and_revoked_by_the_admin_command(tmp_path: Path) -> None:
    database = tmp_path / "board.sqlite3"
    made = admin(database, "token", "create", " \uff21lice ", "--model", "m")  # NFKC: Alice
    assert made.returncode == 0, made.stderr
    token_id, name, model = made.stdout.splitlines()[0].split(" ", 2)
    token = made.stdout.splitlines()[1]
    assert (name, model) == ("Alice", "m") and token.startswith("dce_")
    assert admin(database, "token", "create", "bad\u202ename", "--model", "m").returncode != 0
    listed = admin(database, "token", "list").stdout
    assert f"{token_id}\tAlice\tm\t" in listed and listed.rstrip().endswith("active")
    server = LiveServer(board_settings(tmp_path)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            engine = server.app.state.leaderboard.open()
            with engine.connect() as connection:
                [row] = connection.execute(select(token_table)).all()
            assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
            assert token not in repr(tuple(row))  # only the hash is stored
            bearer = {"Authorization": f"Bearer {token}"}
            run = ok(http.post("/leaderboard/runs", json={"model": "m", "suite": "lite"},
                               headers=bearer))  # fmt: skip
            assert (run["name"], run["anonymous"]) == ("Alice", False)
            for headers, code in (
                ({"Authorization": "Bearer dce_not-a-token"}, "INVALID_TOKEN"),
                ({"Authorization": f"Basic {token}"}, "INVALID_TOKEN"),
                ({"Authorization": "Bearer"}, "INVALID_TOKEN"),
            ):
                refused = http.post("/leaderboard/runs", json={"model": "m"}, headers=headers)
                assert (refused.status_code, refused.json()["code"]) == (401, code)
            revoked = admin(database, "token", "revoke", "Alice")
            assert (revoked.returncode, revoked.stdout.strip()) == (
                0,
                "revoked 1 token(s); their runs are withdrawn",
            )
            after = http.post("/leaderboard/runs", json={"model": "m"}, headers=bearer)
            assert (after.status_code, after.json()["code"]) == (401, "INVALID_TOKEN")
            assert "revoked" in after.json()["detail"]
    finally:
        server.close()
    assert "revoked" in admin(database, "token", "list").stdout
    assert admin(database, "token", "revoke", "nobody").returncode == 1


def test_the_require_token_setting_refuses_anonymous_runs(tmp_path: Path) -> None:
    assert Settings().leaderboard_require_token is False  # the default
    server = LiveServer(board_settings(tmp_path, leaderboard_require_token=True)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            refused = http.post("/leaderboard/runs", json={"name": "anon", "model": "m"})
            assert (refused.status_code, refused.json()["code"]) == (401, "TOKEN_REQUIRED")
            _, token = tokens.create(server.app.state.leaderboard.open(), "carol", "m")
            run = http.post(
                "/leaderboard/runs",
                json={"model": "m", "suite": "lite"},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert ok(run)["name"] == "carol"
    finally:
        server.close()


# ── orphans ────────────────────────────────────────────────────────────────
def test_a_run_whose_server_process_died_is_aborted_when_the_next_one_starts(
    tmp_path: Path,
) -> None:
    settings = board_settings(tmp_path, leaderboard_secret="orphan-test")
    with TestClient(create_app(settings)) as first:
        run = lite_run(first, name="orphan")
        step(first, run["episodes"][0]["episode_id"], FINISH)
        service = first.app.state.leaderboard
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
        with service.open().begin() as connection:  # as if that process had been killed
            connection.execute(
                update(holders)
                .where(holders.c.holder_id == service.holder_id)
                .values(pid=int(gone.stdout))
            )
        service._engine.dispose()
        service._engine = None  # so its own close leaves the row as a killed process would
    with TestClient(create_app(settings)) as again:
        record = ok(again.get(f"/leaderboard/runs/{run['run_id']}"))  # opens: start-up
        assert record["status"] == "aborted"  # at once, not after the run's deadline
        assert [e["status"] for e in record["episodes"]] == ["finished"] + ["aborted"] * 9
        [listed] = lite_board(again)["unranked"]
        assert (listed["run_id"], listed["status"]) == (run["run_id"], "aborted")


def test_a_live_holder_of_another_process_on_this_host_is_left_alone(tmp_path: Path) -> None:
    """A worker beside this one (its pid runs) keeps its runs across this one's start."""
    settings = board_settings(tmp_path, leaderboard_secret="orphan-test")
    with TestClient(create_app(settings)) as first:
        run = lite_run(first, name="held")
        with TestClient(create_app(settings)) as second:
            assert ok(second.get(f"/leaderboard/runs/{run['run_id']}"))["status"] == "open"
        with first.app.state.leaderboard.open().begin() as connection:
            connection.execute(  # an earlier process under this very pid
                update(holders).values(started_at=datetime.now(UTC) - timedelta(days=1 / 24))
            )
        with TestClient(create_app(settings)) as third:
            assert ok(third.get(f"/leaderboard/runs/{run['run_id']}"))["status"] == "aborted"


# ── versions and the audit ─────────────────────────────────────────────────
def test_the_suite_version_is_made_of_the_composition_grader_and_generators() -> None:
    assert f"dce-suite-2-lite+{GRADER_VERSION}+{GENERATOR_VERSION}" == LITE
    assert generator_version(SUITE_GENERATORS) == GENERATOR_VERSION == "gen-e616b156"
    bumped = {**SUITE_GENERATORS, "crm": "crm-v99"}
    assert generator_version(bumped) != GENERATOR_VERSION
    claims_bumped = {**SUITE_GENERATORS, "audit_pipeline": "audit_pipeline-v2"}
    assert generator_version(claims_bumped) != GENERATOR_VERSION
    # benchmark.md's example is the current full suite's version
    assert f"`{suite_version('dce-suite-2')}`" in (ROOT / "docs/benchmark.md").read_text()
    assert suite_version("dce-suite-2", grader="grader-99") != suite_version("dce-suite-2")
    assert suite_version("dce-suite-2", generator=generator_version(bumped)) != suite_version(
        "dce-suite-2"
    )


def test_the_audit_replays_a_suite_version_and_a_new_grader_opens_a_new_board(
    board: TestClient,
) -> None:
    run = lite_run(board, token_for(board, "alice"))
    for e in run["episodes"]:
        play_heuristic(board, e["episode_id"])
    service = board.app.state.leaderboard
    engine, secret = service.open(), service.secret
    report = verify(engine, secret, version=LITE)
    assert (report.matched, report.differ) == (10, [])
    assert rescore(engine, secret, "grader-next").rescored == 10
    before = lite_board(board)
    after = lite_board(board, grader_version="grader-next")
    assert after["suite_version"] == suite_version("dce-suite-2-lite", "grader-next")
    assert after["entries"] == before["entries"] and len(before["entries"]) == 1
    with engine.begin() as connection:
        connection.execute(
            update(records)
            .where(records.c.run_id == run["run_id"], records.c.grader_version == GRADER_VERSION)
            .values(normalised=0.5)
        )
    report = verify(engine, secret, version=LITE)
    assert report.matched == 0 and len(report.differ) == 10
    assert all("stored normalised score 0.5" in line for line in report.differ)


def test_a_board_of_no_suite_is_not_found(board: TestClient) -> None:
    answer = board.get("/leaderboard", params={"suite": "0" * 64})
    assert answer.status_code == 404 and answer.json()["code"] == "UNKNOWN_SUITE"
    assert lite_board(board)["suite"] == "lite"  # a known one still answers


def test_the_audit_of_a_board_that_never_stored_a_secret_finds_nothing_to_replay(
    tmp_path: Path,
) -> None:
    # A new database: no server has stored its secret, so no run was ever recorded. The
    # audit says so (0 records) whether or not a server ran before it, as the wheel test
    # runs it in either order.
    fresh = admin(tmp_path / "new.sqlite3", "audit")
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.strip() == (
        f"audited under {GRADER_VERSION}: 0 records match, 0 differ; 0 of other grader versions"
    )
