"""A leaderboard database outage tells the truth over real HTTP: with its PostgreSQL stopped
(a cluster this test starts in a temporary folder, never the shared one), every leaderboard
route answers 503 LEADERBOARD_UNAVAILABLE with Retry-After, and they serve again once it
returns."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dataclean_env.settings import Settings
from tests.e2e.scale_sessions import free_port
from tests.tools import postgres_bin
from tests.web import LiveServer

pytestmark = pytest.mark.needs("postgres-bin")


class OwnPostgres:
    """A throw-away cluster on a free port of 127.0.0.1 (trust auth, loopback only)."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="dce-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.bin = postgres_bin()
        # PostgreSQL refuses to run as root: then it runs as the postgres user.
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(self.folder, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "dce", "--auth=trust")
        self.url = f"postgresql://dce@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str) -> None:
        command = [*self.as_user, str(self.bin / tool), *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout + done.stderr

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        log = str(self.folder / "log")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", log, "-w", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        subprocess.run(
            [
                *self.as_user,
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "immediate",
                "stop",
            ],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def postgres() -> Iterator[OwnPostgres]:
    cluster = OwnPostgres()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


RUN = {"name": "t", "model": "m", "families": ["crm"], "episodes": 1}
SUBMIT = {"model_name": "m", "task_id": "crm", "score": 0.5, "steps": 3}


def calls(url: str, run_id: str) -> list[httpx.Response]:
    return [
        httpx.get(f"{url}/leaderboard", timeout=120),
        httpx.post(f"{url}/leaderboard/submit", json=SUBMIT, timeout=120),
        httpx.post(f"{url}/leaderboard/runs", json=RUN, timeout=120),
        httpx.get(f"{url}/leaderboard/runs/{run_id}", timeout=120),
    ]


def test_every_leaderboard_route_answers_503_while_the_database_is_down(
    postgres: OwnPostgres, tmp_path: Path
) -> None:
    settings = Settings(
        leaderboard_db=tmp_path / "unused.sqlite3", **{"DATABASE_URL": postgres.url}
    )
    with LiveServer(settings) as server:
        run = httpx.post(f"{server.url}/leaderboard/runs", json=RUN, timeout=120)
        assert run.status_code == 200, run.text
        run_id = run.json()["run_id"]
        postgres.stop()
        down = calls(server.url, run_id)
        assert [a.status_code for a in down] == [503] * 4, [a.text for a in down]
        for answer in down:
            assert answer.headers["retry-after"] == "5"
            assert answer.json()["code"] == "LEADERBOARD_UNAVAILABLE"
            assert answer.json()["detail"].startswith("the leaderboard database is unavailable")
        # the rest of the server still works
        assert httpx.get(f"{server.url}/health", timeout=60).status_code == 200
        postgres.start()
        back = calls(server.url, run_id)
        assert [a.status_code for a in back] == [200] * 4, [a.text for a in back]


def test_a_finish_refused_by_an_outage_can_be_retried(
    postgres: OwnPostgres, tmp_path: Path
) -> None:
    """The finish that meets a stopped database answers 503 (nothing recorded); its retry,
    once the database is back, answers the recorded result, and so does every later retry."""
    settings = Settings(
        leaderboard_db=tmp_path / "unused.sqlite3", **{"DATABASE_URL": postgres.url}
    )
    with LiveServer(settings) as server, httpx.Client(base_url=server.url, timeout=120) as http:
        run = http.post("/leaderboard/runs", json=RUN)
        assert run.status_code == 200, run.text
        run_id, episode_id = run.json()["run_id"], run.json()["episodes"][0]["episode_id"]
        assert http.post("/reset", json={"episode_id": episode_id}).status_code == 200
        finish = {"episode_id": episode_id, "operation": "finish"}
        postgres.stop()
        refused = http.post("/step", json=finish)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "5"
        assert refused.json()["code"] == "LEADERBOARD_UNAVAILABLE"
        postgres.start()
        retried = [http.post("/step", json=finish) for _ in range(2)]
        assert [a.status_code for a in retried] == [200, 200], [a.text for a in retried]
        assert retried[0].json() == retried[1].json()
        assert retried[0].json()["done"] is True
        state = http.get(f"/leaderboard/runs/{run_id}").json()
        assert state["status"] == "complete"
        recorded = [e["score"] for e in state["episodes"]]
        assert recorded == [round(retried[0].json()["info"]["score"], 4)]  # stored to 4 places
