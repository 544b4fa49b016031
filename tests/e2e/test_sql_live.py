"""Hostile SQL over real HTTP: each a 4xx with a code, the episode unchanged, and /health
answering while the hostile step runs (DuckDB releases the GIL; the step runs off the loop)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from dataclean_env.settings import Settings
from tests.web import LiveServer

TASK = "rayyan"
FOREVER = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
HOSTILE = [
    ("query", "SELECT * FROM read_csv('/etc/passwd')", "SQL_REFUSED"),
    ("query", "COPY t TO '/tmp/dce-copy.csv'", "SQL_REFUSED"),
    ("query", "ATTACH '/tmp/dce-attach.db'", "SQL_REFUSED"),
    ("query", "INSTALL httpfs", "SQL_REFUSED"),
    ("query", "LOAD httpfs", "SQL_REFUSED"),
    ("query", "PRAGMA version", "SQL_REFUSED"),
    ("query", "SET threads = 8", "SQL_REFUSED"),
    ("query", "CREATE TABLE x AS SELECT 1", "SQL_REFUSED"),
    ("query", "SELECT 1; DELETE FROM t", "SQL_REFUSED"),
    ("sql", "DELETE FROM t WHERE id < 0; DROP TABLE t", "SQL_REFUSED"),
    ("query", FOREVER, "STEP_TIME_LIMIT"),
    (
        "query",
        "SELECT sum(length(a.article_title || b.journal_title || c.id)) FROM t a, t b, t c",
        "STEP_TIME_LIMIT",
    ),
    ("query", "SELECT sum(x) FROM generate_series(1, 10000000000) g(x)", "STEP_TIME_LIMIT"),
    ("query", "SELECT " + "1 + " * 50_000 + "1", "INVALID_PARAMETERS"),
    ("sql", "UPDATE t SET id = id + 1", "SQL_REFUSED"),
    ("query", "SELECT len(range(200000000))", "TOO_LARGE"),  # 1.6 GB: past the sandbox's cap
    ("sql", "UPDATE t SET article_title = repeat('x', 1200000000)", "TOO_LARGE"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


def _step(client: httpx.Client, operation: str, sql: str) -> httpx.Response:
    return client.post(
        f"/step/{TASK}",
        json={"operation": operation, "parameters": {"sql": sql}},
        params={"episode_id": "sql-victim"},
    )


@pytest.mark.parametrize(("operation", "sql", "code"), HOSTILE, ids=lambda v: str(v)[:40])
def test_hostile_sql_is_refused_over_http(
    server: LiveServer, operation: str, sql: str, code: str
) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        client.post(f"/reset/{TASK}", json={"episode_id": "sql-victim"}).raise_for_status()
        before = client.get("/state", params={"episode_id": "sql-victim"}).json()
        answer = _step(client, operation, sql)
        after = client.get("/state", params={"episode_id": "sql-victim"}).json()
    assert 400 <= answer.status_code < 500
    assert answer.json()["code"] == code
    assert after["step_count"] == before["step_count"] == 0
    assert after["reward"] == before["reward"]


def test_invalid_unicode_is_refused(server: LiveServer) -> None:
    body = '{"operation": "query", "parameters": {"sql": "SELECT \'\\ud800\'"}}'
    with httpx.Client(base_url=server.url, timeout=60) as client:
        client.post(f"/reset/{TASK}", json={"episode_id": "sql-victim"}).raise_for_status()
        answer = client.post(
            f"/step/{TASK}",
            content=body.encode(),
            headers={"content-type": "application/json"},
            params={"episode_id": "sql-victim"},
        )
    assert answer.status_code == 422 and answer.json()["code"] == "INVALID_TEXT"
    assert json.loads(body)  # the body is valid JSON: the refusal is the text's


def _health_latencies_while(
    server: LiveServer, step: Callable[[], httpx.Response]
) -> tuple[httpx.Response, list[float]]:
    """`step()`'s answer, and how long each /health call sent meanwhile took."""
    latencies: list[float] = []
    stop = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            while not stop.is_set():
                started = time.perf_counter()
                assert client.get("/health").status_code == 200
                latencies.append(time.perf_counter() - started)
                time.sleep(0.05)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        return step(), latencies
    finally:
        stop.set()
        poller.join(timeout=30)


def test_health_answers_while_a_never_ending_query_runs(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        client.post(f"/reset/{TASK}", json={"episode_id": "sql-victim"}).raise_for_status()
        answer, latencies = _health_latencies_while(server, lambda: _step(client, "query", FOREVER))
    assert answer.json()["code"] == "STEP_TIME_LIMIT"
    # The step takes its whole time limit (2 s); /health answered several times meanwhile,
    # each well under a second (a generous bound: a blocked loop would wait the 2 s).
    assert len(latencies) >= 5
    assert sorted(latencies)[len(latencies) // 2] < 1.0


def test_health_answers_while_a_fix_runs_a_never_ending_sql_step(server: LiveServer) -> None:
    """A `fix` runs registry operations, `sql` among them: its time is the client's too, so
    it runs off the event loop like `sql` itself."""
    episode = {"episode_id": "fix-victim"}
    with httpx.Client(base_url=server.url, timeout=60) as client:
        reset = client.post("/reset/audit_pipeline", json={**episode, "seed": 1})
        column = reset.json()["observation"]["columns"][1]
        for operation, parameters in [("audit", {"categories": []}), ("identify", {"cells": []})]:
            client.post(
                "/step", json={**episode, "operation": operation, "parameters": parameters}
            ).raise_for_status()
        endless = f'UPDATE t SET "{column}" = "{column}" WHERE ({FOREVER}) < 0'
        fix = {"operations": [{"operation": "sql", "parameters": {"sql": endless}}]}
        answer, latencies = _health_latencies_while(
            server,
            lambda: client.post("/step", json={**episode, "operation": "fix", "parameters": fix}),
        )
    assert answer.status_code == 422 and answer.json()["code"] == "STEP_TIME_LIMIT"
    assert len(latencies) >= 5
    assert sorted(latencies)[len(latencies) // 2] < 1.0


BIG = "big100k"
BIG_ROWS = 100_000
CROSS_JOIN = "SELECT sum(length(a.v || b.v)) FROM t a, t b"  # 10^10 rows


@pytest.fixture(scope="module")
def big_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server with a brought table of 100,000 rows (an id and a short text column)."""
    folder = tmp_path_factory.mktemp("tables") / BIG
    folder.mkdir()
    rows = "\n".join(f"{i},{i % 97}" for i in range(1, BIG_ROWS + 1))
    (folder / "dirty.csv").write_text("id,v\n" + rows + "\n", encoding="utf-8")
    (folder / "clean.csv").write_text("id,v\n" + rows.replace(",96", ",0") + "\n", encoding="utf-8")
    (folder / "task.json").write_text('{"key": "id"}', encoding="utf-8")
    with LiveServer(Settings(extra_datasets=str(folder.parent))) as live:
        yield live


def test_a_self_cross_join_of_100k_rows_is_stopped_at_the_deadline(big_server: LiveServer) -> None:
    """Refused by the step deadline with a code, the episode unchanged, and /health calls
    answered while the step ran (a blocked event loop would answer none until it ended)."""
    answered: list[float] = []  # when each /health call came back
    stop = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=big_server.url, timeout=30) as client:
            while not stop.is_set():
                assert client.get("/health").status_code == 200
                answered.append(time.monotonic())
                time.sleep(0.05)

    episode = {"episode_id": "big-victim"}
    with httpx.Client(base_url=big_server.url, timeout=60) as client:
        client.post(f"/reset/{BIG}", json=episode).raise_for_status()
        before = client.get("/state", params=episode).json()
        poller = threading.Thread(target=poll)
        poller.start()
        try:
            sent = time.monotonic()
            answer = client.post(
                f"/step/{BIG}",
                json={"operation": "query", "parameters": {"sql": CROSS_JOIN}},
                params=episode,
            )
            done = time.monotonic()
        finally:
            stop.set()
            poller.join(timeout=30)
        after = client.get("/state", params=episode).json()
        shown = client.post(
            f"/step/{BIG}",
            json={
                "operation": "query",
                "parameters": {"sql": "SELECT count(*), sum(v::INT) FROM t"},
            },
            params=episode,
        ).json()
    assert 400 <= answer.status_code < 500
    assert answer.json()["code"] == "STEP_TIME_LIMIT", answer.json()
    assert after["step_count"] == before["step_count"] == 0
    assert after["reward"] == before["reward"]
    total = sum(i % 97 for i in range(1, BIG_ROWS + 1))
    assert shown["observation"]["query_result"]["rows"] == [[BIG_ROWS, total]]
    assert sum(sent < t < done for t in answered) >= 2
