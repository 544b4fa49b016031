"""The leaderboard over HTTP and /ws (SQLite in a temporary folder): self-reported scores,
runs on the secret split, blind episodes, one attempt, limits, and the audit. Most runs
here are practice runs (`families`, `episodes`: quick, never ranked); suites, ranking,
tokens and start-up are tests/api/test_leaderboard_suites.py. The database tier
(PostgreSQL, concurrency, crash and restart) is tests/e2e/test_leaderboard_db.py.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from websockets.sync.client import connect

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.benchmark.suite import suites
from dataclean_env.benchmark.versions import GRADER_VERSION, suite_version
from dataclean_env.leaderboard.audit import replay, rescore, verify
from dataclean_env.leaderboard.tables import records, run_episodes, runs
from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings
from tests.support import ok
from tests.web import LiveServer

FINISH = {"operation": "finish"}
SHOW = {"operation": "show_rows", "parameters": {"offset": 1}}  # accepted, changes no cell
FULL = suite_version("dce-suite-2")
NO_RUNS = {
    "title": f"{FULL}: 780 episodes per run, normalised score",
    "suite": "full",
    "suite_version": FULL,
    "grader_version": GRADER_VERSION,
    "episodes_per_run": 780,
    "entries": [],
    "anonymous": [],
    "unranked": [],
    "suites": {"full": FULL, "lite": suite_version("dce-suite-2-lite")},
}
EMPTY = {"leaderboard": [], "total_submissions": 0, "verified": NO_RUNS}


def board_settings(folder: Path, **overrides: Any) -> Settings:
    limits = {
        "leaderboard_runs_per_hour": 100,
        "leaderboard_submissions_per_hour": 1000,
        "leaderboard_open_runs_per_client": 32,
    }
    return Settings(leaderboard_db=folder / "board.sqlite3", **{**limits, **overrides})


@pytest.fixture
def board(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(board_settings(tmp_path))) as client:
        yield client


def start_run(client: TestClient, **body: Any) -> dict[str, Any]:
    return ok(client.post("/leaderboard/runs", json={"name": "tester", "model": "m", **body}))


def step(client: TestClient, episode_id: str, action: dict[str, Any]) -> dict[str, Any]:
    return ok(client.post("/step", json={"episode_id": episode_id, **action}))


def play_heuristic(client: TestClient, episode_id: str) -> dict[str, Any]:
    agent = HeuristicAgent()
    result = ok(client.post("/reset", json={"episode_id": episode_id}))
    while not result["done"]:
        answer = client.post(
            "/step", json={"episode_id": episode_id, **agent.act(result["observation"])}
        )
        if answer.status_code == 422:  # refused (the heuristic misreads some v2 cards): go on
            state = ok(client.get("/state", params={"episode_id": episode_id}))
            if state["done"]:  # the refusal allowance ran out
                return {**result, "done": True}
            continue
        result = ok(answer)
    return result


def stored(client: TestClient, run_id: str) -> list[Any]:
    engine = client.app.state.leaderboard.open()
    with engine.connect() as connection:
        return list(
            connection.execute(
                select(records, run_episodes.c.instance_index)
                .join(run_episodes, run_episodes.c.episode_id == records.c.episode_id)
                .where(records.c.run_id == run_id)
                .order_by(run_episodes.c.position)
            )
        )


# ── self-reported scores (CleanifyAI's form) ──────────────────────────────
def test_a_fresh_board_is_empty(board: TestClient) -> None:
    assert ok(board.get("/leaderboard")) == EMPTY


def test_a_submission_is_stored_as_self_reported_in_cleanifyai_shape(board: TestClient) -> None:
    body = {"model_name": "gpt-x", "task_id": "easy_dedup_rename", "score": 0.75, "steps": 4}
    answer = ok(board.post("/leaderboard/submit", json=body))
    assert answer["status"] == "submitted"
    assert {k: answer["entry"][k] for k in body} == body
    assert answer["entry"]["verified"] is False
    ok(board.post("/leaderboard/submit", json={**body, "score": 0.5}))  # best score counts
    ok(board.post("/leaderboard/submit", json={**body, "task_id": "crm", "score": 0.25}))
    ok(board.post("/leaderboard/submit", json={**body, "model_name": "other", "score": 0.9}))
    assert ok(board.get("/leaderboard")) == {
        "leaderboard": [
            {
                "rank": 1,
                "model_name": "other",
                "scores": {"easy_dedup_rename": 0.9},
                "avg_score": 0.9,
            },
            {
                "rank": 2,
                "model_name": "gpt-x",
                "scores": {"crm": 0.25, "easy_dedup_rename": 0.75},
                "avg_score": 0.5,
            },
        ],
        "total_submissions": 4,
        "verified": NO_RUNS,
    }


GOOD = {"model_name": "m", "task_id": "crm", "score": 0.5, "steps": 3}


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"task_id": "no_such_task"}, 404, "UNKNOWN_TASK"),
        ({"score": 0.0}, 422, "INVALID_SUBMISSION"),
        ({"score": 1.0}, 422, "INVALID_SUBMISSION"),
        ({"score": 1.5}, 422, "INVALID_SUBMISSION"),
        ({"score": -0.2}, 422, "INVALID_SUBMISSION"),
        ({"score": "high"}, 422, "INVALID_SUBMISSION"),
        ({"steps": -1}, 422, "INVALID_SUBMISSION"),
        ({"model_name": ""}, 422, "INVALID_NAME"),
        ({"model_name": "x" * 65}, 422, "INVALID_NAME"),
        ({"model_name": "bad\nname"}, 422, "INVALID_NAME"),
        ({"model_name": None}, 422, "INVALID_SUBMISSION"),
    ],
)
def test_bad_submissions_are_refused_and_store_nothing(
    board: TestClient, change: dict, status: int, code: str
) -> None:
    answer = board.post("/leaderboard/submit", json={**GOOD, **change})
    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == code
    assert ok(board.get("/leaderboard")) == EMPTY


def test_a_submission_without_steps_counts_zero_and_needs_a_json_object(board: TestClient) -> None:
    body = {k: v for k, v in GOOD.items() if k != "steps"}
    assert ok(board.post("/leaderboard/submit", json=body))["entry"]["steps"] == 0
    answer = board.post("/leaderboard/submit", content=b"[1, 2]")
    assert (answer.status_code, answer.json()["code"]) == (422, "INVALID_ACTION")


def test_an_unusable_database_makes_only_the_leaderboard_unavailable(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    settings = Settings(leaderboard_db=tmp_path / "a-file" / "board.sqlite3")
    with TestClient(create_app(settings)) as client:
        for answer in (
            client.get("/leaderboard"),
            client.post("/leaderboard/submit", json=GOOD),
            client.post("/leaderboard/runs", json={"name": "a", "model": "m"}),
        ):
            assert (answer.status_code, answer.json()["code"]) == (503, "LEADERBOARD_UNAVAILABLE")
        assert ok(client.get("/health"))["status"] == "healthy"
        assert ok(client.post("/reset/crm", json={"seed": 1}))["done"] is False


# ── runs ──────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "body",
    [
        {"name": "a", "model": "m", "episodes": 0},
        {"name": "a", "model": "m", "episodes": 61},
        {"name": "a", "model": "m", "families": ["no_such_family"]},
        {"name": "a", "model": "m", "families": ["easy_dedup_rename"]},  # not generated
        {"name": "a", "model": "m", "families": []},
        {"model": "m"},
        {"name": "a", "model": "m", "score": 0.99},  # a run never takes a score
        {"name": "a", "model": "m", "scores": [0.99]},
        {"name": "a", "model": "m", "suite": "no_such_suite"},
        {"name": "a", "model": "m", "suite": "lite", "episodes": 2},  # a suite is played whole
        {"name": "a", "model": "m", "agent": {"temperature": -1}},
    ],
)
def test_bad_run_requests_are_refused(board: TestClient, body: dict) -> None:
    answer = board.post("/leaderboard/runs", json=body)
    assert (answer.status_code, answer.json()["code"]) == (422, "INVALID_SUBMISSION"), answer.text


def test_a_run_issues_unguessable_ids_that_its_public_status_never_shows(board: TestClient) -> None:
    run = start_run(board, families=["crm", "orders"], episodes=3)
    assert re.fullmatch(r"run-[0-9a-f]{16}", run["run_id"])
    assert [e["task_id"] for e in run["episodes"]] == ["crm", "orders", "crm"]
    ids = [e["episode_id"] for e in run["episodes"]]
    assert all(re.fullmatch(r"lb-[0-9a-f]{32}", i) for i in ids) and len(set(ids)) == 3
    status = board.get(f"/leaderboard/runs/{run['run_id']}")
    assert not any(i in status.text for i in ids)
    assert ok(status)["status"] == "open"
    assert [e["status"] for e in status.json()["episodes"]] == ["open"] * 3
    answer = board.get("/leaderboard/runs/run-0000000000000000")
    assert (answer.status_code, answer.json()["code"]) == (404, "UNKNOWN_RUN")


def test_the_default_run_plays_the_full_suite_and_a_practice_run_every_family(
    board: TestClient,
) -> None:
    run = start_run(board)
    assert (run["suite"], run["suite_version"], run["anonymous"]) == ("full", FULL, True)
    cells = [(e["task_id"], e["difficulty"]) for e in run["episodes"]]
    full = suites()["full"]
    assert len(cells) == 780
    assert cells == [
        (c.family, c.difficulty)
        for c in full.cells
        for _ in range(full.instances_per_cell(c.family))
    ]
    practice = start_run(board, episodes=12)
    assert practice["suite"] is None and practice["suite_version"] is None
    families = [e["task_id"] for e in practice["episodes"]]
    assert len(families) == 12
    assert sorted(set(families)) == sorted(
        ["fix_types", "normalize_dedupe", "full_pipeline", "crm", "orders", "inventory"]
    )


def test_blind_over_rest_until_the_end_then_the_score_the_server_recorded(
    board: TestClient,
) -> None:
    run = start_run(board, families=["crm"], episodes=1)
    episode_id = run["episodes"][0]["episode_id"]
    first = ok(board.post("/reset", json={"episode_id": episode_id}))
    seen = [first, step(board, episode_id, SHOW)]
    seen.append(ok(board.get("/state", params={"episode_id": episode_id})))
    for answer in seen:
        assert answer["reward"] is None
        assert "score" not in json.dumps(answer.get("observation", {}))
    assert seen[0]["info"]["reward_hidden"] is True
    last = step(board, episode_id, FINISH)
    assert last["done"] and 0 < last["reward"]["total"] < 1
    [record] = stored(board, run["run_id"])
    assert record.score == last["reward"]["total"]
    assert record.components == last["reward"]
    assert record.trace == [SHOW, {"operation": "finish", "parameters": {}}]
    # The server's own recomputation from the secret gives the same score.
    secret = board.app.state.leaderboard.secret
    again = replay(secret, "crm", record.instance_index, record.trace)
    assert again.reward.total == last["reward"]["total"]
    assert again.instance_hash == record.instance_hash
    status = ok(board.get(f"/leaderboard/runs/{run['run_id']}"))
    assert status["status"] == "complete" and status["mean"] == last["reward"]["total"]
    assert status["ranked"] is False  # a practice run: never on a board
    assert ok(board.get("/leaderboard"))["verified"] == NO_RUNS


def test_hidden_reward_mode_works_outside_the_leaderboard(board: TestClient) -> None:
    body = {"reward_mode": "hidden", "episode_id": "my-blind-one", "seed": 3}
    first = ok(board.post("/reset/crm", json=body))
    assert first["reward"] is None and first["info"]["reward_hidden"] is True
    assert step(board, "my-blind-one", SHOW)["reward"] is None
    assert ok(board.get("/state", params={"episode_id": "my-blind-one"}))["reward"] is None
    assert step(board, "my-blind-one", FINISH)["reward"]["total"] > 0
    visible = ok(board.post("/reset/crm", json={"episode_id": "seen", "seed": 3}))
    assert visible["reward"]["total"] > 0
    answer = board.post("/reset/crm", json={"reward_mode": "secret"})
    assert answer.status_code == 422


def test_one_attempt_per_instance(board: TestClient) -> None:
    run = start_run(board, families=["orders"], episodes=1)
    episode_id = run["episodes"][0]["episode_id"]
    ok(board.post("/reset", json={"episode_id": episode_id}))
    step(board, episode_id, SHOW)
    again = ok(board.post("/reset/crm", json={"episode_id": episode_id, "seed": 5}))
    assert again["observation"]["step"] == 1  # a reset joins it as it stands
    assert again["observation"]["task_id"] == "orders"
    finished = step(board, episode_id, FINISH)
    assert step(board, episode_id, FINISH) == finished  # a retried finish: the recorded result
    after = board.post("/step", json={"episode_id": episode_id, **SHOW})
    assert (after.status_code, after.json()["code"]) == (409, "EPISODE_FINISHED")
    assert len(stored(board, run["run_id"])) == 1


def test_a_client_cannot_send_a_score_with_a_step(board: TestClient) -> None:
    run = start_run(board, families=["crm"], episodes=1)
    episode_id = run["episodes"][0]["episode_id"]
    for forged in ({"score": 0.9999}, {"reward": {"total": 0.9999}}, {"done": True}):
        answer = board.post("/step", json={"episode_id": episode_id, **FINISH, **forged})
        assert answer.status_code == 422, answer.text
    # Self-reporting the same name changes nothing on the verified board.
    ok(board.post("/leaderboard/submit", json={**GOOD, "model_name": "m", "score": 0.9999}))
    last = step(board, episode_id, FINISH)
    status = ok(board.get(f"/leaderboard/runs/{run['run_id']}"))
    assert status["mean"] == last["reward"]["total"] < 0.9


def test_an_episode_past_its_deadline_is_scored_as_it_stands(tmp_path: Path) -> None:
    # Starting, finishing and resetting take milliseconds; the deadline is far from them.
    settings = board_settings(tmp_path, leaderboard_episode_seconds=3)
    with TestClient(create_app(settings)) as client:
        run = start_run(client, families=["crm"], episodes=2)
        first, second = (e["episode_id"] for e in run["episodes"])
        step(client, first, FINISH)
        ok(client.post("/reset", json={"episode_id": second}))
        time.sleep(3.5)
        late = client.post("/step", json={"episode_id": second, **FINISH})
        assert (late.status_code, late.json()["code"]) == (409, "EPISODE_FINISHED")
        assert "timed_out" in late.json()["detail"]
        status = ok(client.get(f"/leaderboard/runs/{run['run_id']}"))
        assert status["status"] == "timed_out"  # not every episode was finished
        assert [e["status"] for e in status["episodes"]] == ["finished", "timed_out"]
        assert [r.status for r in stored(client, run["run_id"])] == ["finished", "timed_out"]


def _database(client: TestClient) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every leaderboard table."""
    from dataclean_env.leaderboard.tables import metadata

    engine = client.app.state.leaderboard.open()
    with engine.connect() as connection:
        return {
            table.name: sorted(map(tuple, connection.execute(select(table))), key=repr)
            for table in metadata.sorted_tables
        }


def test_an_untouched_run_times_out_at_the_sweep_and_reads_change_nothing(
    tmp_path: Path,
) -> None:
    """An episode's clock starts when it is joined; the run's own deadline ends the rest, at
    the periodic sweep (the heartbeat's): reading the board or the run writes nothing."""
    settings = board_settings(tmp_path, leaderboard_run_seconds=0.3)
    with TestClient(create_app(settings)) as client:
        run = start_run(client, families=["crm"], episodes=2)
        first = run["episodes"][0]["episode_id"]
        ok(client.post("/reset", json={"episode_id": first}))
        time.sleep(0.5)
        before = _database(client)
        ok(client.get("/leaderboard"))
        assert ok(client.get(f"/leaderboard/runs/{run['run_id']}"))["status"] == "open"
        assert _database(client) == before  # past its deadline, and still as it was
        client.app.state.leaderboard.sweep()
        status = ok(client.get(f"/leaderboard/runs/{run['run_id']}"))
        assert status["status"] == "timed_out"
        assert [e["status"] for e in status["episodes"]] == ["timed_out", "timed_out"]
        [record] = stored(client, run["run_id"])  # the joined one, scored as it stood
        assert (record.status, record.trace, record.steps) == ("timed_out", [], 0)


def test_rate_limits_per_client(tmp_path: Path) -> None:
    settings = board_settings(
        tmp_path, leaderboard_runs_per_hour=2, leaderboard_submissions_per_hour=3
    )
    with TestClient(create_app(settings)) as client:
        start_run(client, episodes=1)
        start_run(client, episodes=1)
        third = client.post("/leaderboard/runs", json={"name": "a", "model": "m", "episodes": 1})
        assert (third.status_code, third.json()["code"]) == (429, "RATE_LIMITED")
        for _ in range(3):
            ok(client.post("/leaderboard/submit", json=GOOD))
        fourth = client.post("/leaderboard/submit", json=GOOD)
        assert (fourth.status_code, fourth.json()["code"]) == (429, "RATE_LIMITED")
        assert ok(client.get("/leaderboard"))["total_submissions"] == 3


def test_open_runs_are_bounded(tmp_path: Path) -> None:
    settings = board_settings(tmp_path, leaderboard_open_anonymous_runs=1)
    with TestClient(create_app(settings), client=("127.0.0.2", 50000)) as client:
        start_run(client, episodes=1)
        # another client, under its own share: the global cap refuses it
        other = TestClient(client.app, client=("127.0.0.3", 50000))
        full = other.post("/leaderboard/runs", json={"name": "a", "model": "m", "episodes": 1})
        assert (full.status_code, full.json()["code"]) == (503, "SERVER_FULL")
        assert full.headers["Retry-After"] == "5"


def test_one_client_holds_at_most_its_share_of_open_runs(tmp_path: Path) -> None:
    """A client at its share is refused (with the limit's own code) while another client is
    served; a run that ends frees its holder's share."""
    assert Settings().leaderboard_open_runs_per_client == 2  # the default share
    settings = board_settings(tmp_path, leaderboard_open_runs=4, leaderboard_open_runs_per_client=2)
    with TestClient(create_app(settings), client=("127.0.0.2", 50000)) as greedy:
        other = TestClient(greedy.app, client=("127.0.0.3", 50000))
        first = start_run(greedy, episodes=1)
        start_run(greedy, episodes=1)
        refused = greedy.post("/leaderboard/runs", json={"name": "a", "model": "m", "episodes": 1})
        assert (refused.status_code, refused.json()["code"]) == (503, "CLIENT_QUOTA_REACHED")
        assert refused.headers["Retry-After"] == "30"
        assert "at most 2 open leaderboard runs per client" in refused.json()["detail"]
        start_run(other, episodes=1)  # another client is served
        step(greedy, first["episodes"][0]["episode_id"], FINISH)
        start_run(greedy, episodes=1)  # the ended run freed its share
        engine = greedy.app.state.leaderboard.open()
        with engine.connect() as connection:
            assert len(list(connection.execute(select(runs)))) == 4  # the refusal stored none


# Names other people read: shown as text, so nothing in them may hide or reorder characters.
BAD_NAMES = [
    "",
    "   ",
    "x" * 129,  # past both bounds (64 for a submitter, 128 for a model)
    "bad\nname",
    "tab\tname",
    "GPT-5 \u202e(laiciffo)",  # right-to-left override
    "GPT\u200b-5",  # zero-width space
    "GPT\u2066-5",  # left-to-right isolate
    "GPT\ufeff-5",  # zero-width no-break space
    "\u00ad",  # soft hyphen only
    "\ufdfa" * 8,  # 8 characters that NFKC makes 144
]


@pytest.mark.parametrize("name", BAD_NAMES)
@pytest.mark.parametrize("field", ["name", "model"])
def test_a_run_under_a_bad_name_is_refused_and_stores_nothing(
    board: TestClient, field: str, name: str
) -> None:
    answer = board.post("/leaderboard/runs", json={"name": "a", "model": "m", field: name})
    assert (answer.status_code, answer.json()["code"]) == (422, "INVALID_NAME"), answer.text
    assert answer.json()["detail"].startswith(f"{field}: ")
    engine = board.app.state.leaderboard.open()
    with engine.connect() as connection:
        assert list(connection.execute(select(runs))) == []


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_submission_under_a_bad_name_is_refused_and_stores_nothing(
    board: TestClient, name: str
) -> None:
    answer = board.post("/leaderboard/submit", json={**GOOD, "model_name": name})
    assert (answer.status_code, answer.json()["code"]) == (422, "INVALID_NAME"), answer.text
    assert ok(board.get("/leaderboard")) == EMPTY


def test_names_are_stored_nfkc_normalised_and_trimmed(board: TestClient) -> None:
    # a full-width A, an fi ligature
    run = start_run(board, name=" \uff21lice ", model="\ufb01ne-tuned", episodes=1)
    assert (run["name"], run["model"]) == ("Alice", "fine-tuned")
    entry = ok(board.post("/leaderboard/submit", json={**GOOD, "model_name": "\u2460x"}))
    assert entry["entry"]["model_name"] == "1x"  # ① is 1
    accented = "Jose\u0301"  # e + combining acute: NFKC composes it
    assert start_run(board, name=accented, episodes=1)["name"] == "Jos\u00e9"


def test_the_audit_replays_runs_and_catches_a_changed_score(board: TestClient) -> None:
    run = start_run(board, families=["inventory", "fix_types"], episodes=2)
    for e in run["episodes"]:
        play_heuristic(board, e["episode_id"])
    service = board.app.state.leaderboard
    engine, secret = service.open(), service.secret
    report = verify(engine, secret)
    assert (report.matched, report.differ) == (2, [])
    # Re-scoring under another grader version (a suite run's: tests/api/test_leaderboard_suites.py)
    assert rescore(engine, secret, "grader-next").rescored == 2
    assert rescore(engine, secret, "grader-next").rescored == 0  # idempotent
    with engine.begin() as connection:
        connection.execute(
            update(records)
            .where(records.c.run_id == run["run_id"], records.c.grader_version == GRADER_VERSION)
            .values(score=0.1234)
        )
    report = verify(engine, secret)
    assert report.matched == 0 and len(report.differ) == 2
    assert all("stored score 0.1234" in line for line in report.differ)


# ── /ws ───────────────────────────────────────────────────────────────────
def frame(ws: Any, message: dict[str, Any]) -> dict[str, Any]:
    ws.send(json.dumps(message))
    answer = json.loads(ws.recv(timeout=30))
    assert answer["type"] == "observation", answer
    return answer["data"]


def test_blind_over_ws_for_a_leaderboard_episode_and_for_hidden_mode(tmp_path: Path) -> None:
    server = LiveServer(board_settings(tmp_path)).start()
    try:
        run = ok(
            httpx.post(
                f"{server.url}/leaderboard/runs",
                json={"name": "ws", "model": "m", "families": ["crm"], "episodes": 1},
                timeout=60,
            )
        )
        episode_id = run["episodes"][0]["episode_id"]
        with connect(f"ws://127.0.0.1:{server.port}/ws") as ws:
            for data in (
                frame(ws, {"type": "reset", "data": {"episode_id": episode_id}}),
                frame(ws, {"type": "step", "data": SHOW}),
            ):
                assert data["reward"] is None
                assert data["observation"]["score"] is None
                assert data["observation"]["score_components"] is None
                assert data["observation"]["episode_id"] == episode_id
            ws.send(json.dumps({"type": "state"}))
            state = json.loads(ws.recv(timeout=30))["data"]
            assert state["reward"] is None and state["step_count"] == 1
            last = frame(ws, {"type": "step", "data": FINISH})
            assert last["done"] and last["reward"] == last["observation"]["score"] > 0
            [record] = stored_by_url(server, run["run_id"])
            assert record.score == round(last["reward"], 4)  # the reward object: 4 places
            # The same reset option outside the leaderboard.
            blind = frame(
                ws, {"type": "reset", "data": {"task_id": "crm", "reward_mode": "hidden"}}
            )
            assert blind["observation"]["score"] is None and blind["reward"] is None
            end = frame(ws, {"type": "step", "data": FINISH})
            assert end["observation"]["score"] == end["reward"] > 0
    finally:
        server.close()


def stored_by_url(server: LiveServer, run_id: str) -> list[Any]:
    engine = server.app.state.leaderboard.open()
    with engine.connect() as connection:
        return list(connection.execute(select(records).where(records.c.run_id == run_id)))
