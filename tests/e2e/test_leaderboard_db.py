"""The leaderboard's database, on SQLite (a file, WAL) and on a real PostgreSQL server
(`.ci/setup-postgres.sh` runs one on 127.0.0.1:54329; DCE_TEST_DATABASE_URL overrides):
50 concurrent writers through two server processes lose nothing; a server killed with
SIGKILL and restarted still has everything it acknowledged; the audit command replays the
stored runs to the same scores with the secret the first start stored.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from dataclean_env.leaderboard import db
from dataclean_env.leaderboard.tables import records, runs, submissions
from tests.support import LITE_EPISODES
from tests.tools import PG_URL

ROOT = Path(__file__).resolve().parents[2]
LIMITS = {
    "DCE_LEADERBOARD_RUNS_PER_HOUR": "1000",
    "DCE_LEADERBOARD_SUBMISSIONS_PER_HOUR": "100000",
    "DCE_LEADERBOARD_OPEN_RUNS": "200",
    "DCE_LEADERBOARD_OPEN_ANONYMOUS_RUNS": "200",
    "DCE_LEADERBOARD_OPEN_RUNS_PER_CLIENT": "200",
}
FINISH = {"operation": "finish"}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.needs("postgres"))])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment that points a server at a fresh, empty database."""
    if request.param == "sqlite":
        yield {"DCE_LEADERBOARD_DB": str(tmp_path / "board.sqlite3")}
        return
    import psycopg

    name = f"dce_t_{secrets.token_hex(6)}"
    with psycopg.connect(PG_URL, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield {"DATABASE_URL": PG_URL.rsplit("/", 1)[0] + "/" + name}
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(database: dict[str, str]) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "DCE_LEADERBOARD_DB", "DCE_LEADERBOARD_SECRET")
    }
    return {**env, **LIMITS, **database}


class Server:
    """The `server` entry point in a subprocess on 127.0.0.1 (stopped by the test)."""

    def __init__(self, database: dict[str, str], log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log.open("ab")
        code = "from dataclean_env.server.app import main; main()"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, "--host", "127.0.0.1", "--port", str(self.port)],
            env=server_env(database),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )

    def ready(self) -> Server:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.process.poll() is None, Path(self.log.name).read_text()[-3000:]
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("the server did not start")

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        self.log.close()


def post(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = client.post(path, json=body, timeout=120)
    assert answer.status_code == 200, answer.text
    return answer.json()


def engine_for(database: dict[str, str]) -> Any:
    url = db.database_url(
        database.get("DATABASE_URL", ""), Path(database.get("DCE_LEADERBOARD_DB", ""))
    )
    return db.connect(url)


def counts(database: dict[str, str]) -> dict[str, int]:
    engine = engine_for(database)
    try:
        with engine.connect() as connection:
            return {
                table.name: connection.execute(select(func.count()).select_from(table)).scalar_one()
                for table in (submissions, runs, records)
            }
    finally:
        engine.dispose()


def one_writer(url: str, n: int) -> tuple[str, str, float]:
    """A self-reported submission, then a whole one-episode run: what was acknowledged."""
    with httpx.Client(base_url=url) as client:
        name = f"writer-{n}"
        body = {"model_name": name, "task_id": "crm", "score": 0.01 + n / 100, "steps": n}
        post(client, "/leaderboard/submit", body)
        run = post(
            client,
            "/leaderboard/runs",
            {"name": name, "model": "noop", "families": ["fix_types"], "episodes": 1},
        )
        episode_id = run["episodes"][0]["episode_id"]
        post(client, "/reset", {"episode_id": episode_id})
        final = post(client, "/step", {"episode_id": episode_id, **FINISH})
        assert final["done"]
        return name, run["run_id"], final["reward"]["total"]


def test_fifty_concurrent_writers_lose_nothing(database: dict[str, str], tmp_path: Path) -> None:
    # Two processes on one database, started together (so their start-up migrations race).
    servers = [Server(database, tmp_path / f"server-{i}.log") for i in range(2)]
    try:
        urls = [server.ready().url for server in servers]
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=50) as pool:
            done = list(pool.map(lambda n: one_writer(urls[n % 2], n), range(50)))
        print(f"50 writers in {time.monotonic() - started:.1f} s")
        board = httpx.get(f"{urls[0]}/leaderboard", timeout=60).json()
        recorded = {
            run_id: httpx.get(f"{urls[0]}/leaderboard/runs/{run_id}", timeout=60).json()["mean"]
            for _, run_id, _ in done
        }
    finally:
        for server in servers:
            server.stop()
    assert counts(database) == {"submissions": 50, "runs": 50, "records": 50}
    assert board["total_submissions"] == 50
    assert {e["model_name"] for e in board["leaderboard"]} == {name for name, _, _ in done}
    # Practice runs: never ranked; each run's record holds the score its writer was told.
    assert board["verified"]["entries"] == []
    assert recorded == {run_id: score for _, run_id, score in done}


def test_a_killed_server_keeps_everything_it_acknowledged(
    database: dict[str, str], tmp_path: Path
) -> None:
    server = Server(database, tmp_path / "server.log").ready()
    acknowledged: list[str] = []
    stop = threading.Event()

    def keep_submitting() -> None:
        with httpx.Client(base_url=server.url) as client:
            n = 0
            while not stop.is_set():
                name = f"ack-{n}"
                try:
                    answer = client.post(
                        "/leaderboard/submit",
                        json={"model_name": name, "task_id": "orders", "score": 0.5},
                        timeout=30,
                    )
                except httpx.HTTPError:
                    return  # the server is gone
                if answer.status_code == 200:
                    acknowledged.append(name)
                n += 1

    try:
        with httpx.Client(base_url=server.url) as client:
            complete = post(
                client, "/leaderboard/runs", {"name": "full", "model": "noop", "suite": "lite"}
            )
            for e in complete["episodes"]:
                post(client, "/step", {"episode_id": e["episode_id"], **FINISH})
            # Its scores show once the run has ended (none before).
            shown = client.get(f"/leaderboard/runs/{complete['run_id']}").json()
            finals = [e["score"] for e in shown["episodes"]]
            partial = post(
                client, "/leaderboard/runs", {"name": "half", "model": "noop", "suite": "lite"}
            )
            half = post(
                client, "/step", {"episode_id": partial["episodes"][0]["episode_id"], **FINISH}
            )
            assert half["done"] and half["reward"] is None  # the run is open: sealed
        writer = threading.Thread(target=keep_submitting)
        writer.start()
        deadline = time.monotonic() + 60
        while len(acknowledged) < 30 and time.monotonic() < deadline:
            time.sleep(0.05)
        server.kill()  # in the middle of the writes
        stop.set()
        writer.join(timeout=60)
    finally:
        stop.set()
        server.stop()  # already killed unless a step above failed
    assert len(acknowledged) >= 30

    again = Server(database, tmp_path / "again.log").ready()
    try:
        board = httpx.get(f"{again.url}/leaderboard?suite=lite", timeout=60).json()
        run_half = httpx.get(f"{again.url}/leaderboard/runs/{partial['run_id']}", timeout=60).json()
        lost = httpx.post(
            f"{again.url}/step",
            json={"episode_id": partial["episodes"][1]["episode_id"], **FINISH},
            timeout=60,
        )
    finally:
        again.stop()
    names = {e["model_name"] for e in board["leaderboard"]}
    assert set(acknowledged) <= names
    assert board["total_submissions"] in (len(acknowledged), len(acknowledged) + 1)  # + in flight
    [entry] = board["verified"]["anonymous"]  # no token: listed apart from named rows
    assert entry["records"] == [f"/leaderboard/runs/{complete['run_id']}"]
    assert (entry["raw"], entry["normalised"]) == (round(sum(finals) / LITE_EPISODES, 4), 0.0)
    # Its server was killed: aborted as the next one started, listed, never ranked.
    assert run_half["status"] == "aborted"
    assert run_half["episodes"][0]["score"] > 0  # recorded; shown now that the run is closed
    assert [e["score"] for e in run_half["episodes"][1:]] == [None] * (LITE_EPISODES - 1)
    assert [(u["run_id"], u["status"]) for u in board["verified"]["unranked"]] == [
        (partial["run_id"], "aborted")
    ]
    assert (lost.status_code, lost.json()["code"]) == (404, "UNKNOWN_EPISODE")

    audit = subprocess.run(
        [sys.executable, "-m", "dataclean_env.leaderboard.audit"],
        env=server_env(database),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert f"{LITE_EPISODES + 1} records match, 0 differ" in audit.stdout


def test_inference_plays_a_whole_leaderboard_run(tmp_path: Path) -> None:
    """`inference.py --leaderboard` plays the lite suite under the token it is given."""
    from dataclean_env.leaderboard import tokens
    from dataclean_env.settings import Settings
    from tests.web import LiveServer

    live = LiveServer(Settings(leaderboard_db=tmp_path / "board.sqlite3")).start()
    try:
        _, token = tokens.create(live.app.state.leaderboard.open(), "team-h", "heuristic-baseline")
        command = [sys.executable, "inference.py", "--leaderboard", "ignored", "--agent"]
        command += ["heuristic", "--env-url", live.url, "--suite", "lite"]
        env = {**os.environ, "DCE_LEADERBOARD_TOKEN": token}
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        board = httpx.get(f"{live.url}/leaderboard?suite=lite", timeout=60).json()
        [row] = board["verified"]["entries"]
        run = httpx.get(f"{live.url}{row['records'][0]}", timeout=60).json()
    finally:
        live.close()
    assert done.returncode == 0, done.stderr[-3000:]
    ends = [line for line in done.stdout.splitlines() if line.startswith("[END]")]
    assert len(ends) == LITE_EPISODES
    [entry] = board["verified"]["entries"]
    assert (entry["name"], entry["model"], entry["episodes"]) == (
        "team-h",
        "heuristic-baseline",
        LITE_EPISODES,
    )
    [record] = entry["records"]
    assert f"Leaderboard: {live.url}/leaderboard" in done.stderr
    assert f"(this run: {live.url}{record})" in done.stderr
    assert f"normalised score {entry['normalised']:.4f}" in done.stderr
    # No score of a run is shown before it ends: every [END] line but the last reads 0.00,
    # the last (the episode that ended the run) the score the server revealed.
    finals = [float(line.split("score=")[1].split()[0]) for line in ends]
    assert finals[:-1] == [0.0] * (LITE_EPISODES - 1)
    assert finals[-1] == round(run["episodes"][-1]["score"], 2)  # played in the run's order
