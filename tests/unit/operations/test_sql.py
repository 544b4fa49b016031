"""query and sql: the sandbox refuses what reaches past `t`, and SQL repairs equal the
built-in operations' (same table, snapshot and reward)."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from dataclean_env.in_process import DataCleaningEnv
from dataclean_env.sandbox.sql_jobs import MAX_RESULT_CHARS
from dataclean_env.table.limits import untimed_limits

HOSTILE = {
    "SELECT * FROM read_csv('/etc/passwd')": "SQL_REFUSED",
    "COPY t TO 'out.csv'": "SQL_REFUSED",
    "ATTACH 'other.db'": "SQL_REFUSED",
    "INSTALL httpfs": "SQL_REFUSED",
    "LOAD httpfs": "SQL_REFUSED",
    "PRAGMA version": "SQL_REFUSED",
    "SET threads = 4": "SQL_REFUSED",
    "CREATE TABLE x (a INT)": "SQL_REFUSED",
    "SELECT 1; SELECT 2": "SQL_REFUSED",
    "SELECT getenv('HOME')": "SQL_REFUSED",
    "SELECT " + "1 + " * 60_000 + "1": "INVALID_PARAMETERS",
    # Lists and long text that DuckDB's memory_limit does not bound: its sandbox process's
    # own memory cap refuses them, so the server never holds them.
    "SELECT len(range(200000000))": "TOO_LARGE",
    "SELECT length(repeat('x', 1200000000))": "TOO_LARGE",
}
# A query that never ends runs until the step's time limit (2 s):
# tests/api/test_sql_time_limit.py. The tests here play untimed, so that a slow machine
# never turns their steps into STEP_TIME_LIMIT refusals.
UNTIMED = untimed_limits()


@pytest.mark.parametrize("statement", sorted(HOSTILE))
def test_hostile_query_is_refused_and_changes_nothing(statement: str) -> None:
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    before = env.reset()
    result = env.step({"operation": "query", "parameters": {"sql": statement}})
    assert result.info["error"]["code"] == HOSTILE[statement]
    assert result.observation.step == 0
    assert (
        env.step({"operation": "query", "parameters": {"sql": "SELECT 1"}}).info.get("error")
        is None
    )
    assert result.reward == before.reward


def test_sql_cannot_change_the_key_or_run_other_statements() -> None:
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    env.reset()
    codes = [
        env.step({"operation": "sql", "parameters": {"sql": text}}).info["error"]["code"]
        for text in (
            "UPDATE t SET id = id + 1",
            "DELETE FROM t WHERE id < 0; DROP TABLE t",
            "INSERT INTO t (id) VALUES (99999)",
            "SELECT * FROM t",
        )
    ]
    assert codes == ["SQL_REFUSED"] * 4
    assert env.state().step_count == 0


def test_query_result_is_a_field_of_the_observation() -> None:
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    env.reset()
    sql = "SELECT id FROM t ORDER BY id LIMIT 2"
    observation = env.step({"operation": "query", "parameters": {"sql": sql}}).observation
    assert observation.message == "Query returned 2 rows."
    assert observation.model_dump()["query_result"] == {
        "columns": ["id"],
        "rows": [[1266], [2842]],
        "total_rows": 2,
        "truncated": False,
    }


def test_a_long_result_is_cut_at_50_rows_and_says_so() -> None:
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    env.reset()
    sql = "SELECT id, article_jissue FROM t WHERE article_jissue IS NULL ORDER BY id"
    result = env.step({"operation": "query", "parameters": {"sql": sql}}).observation
    assert result.message == "Query returned 53 rows; the first 50 are shown."
    shown = result.query_result
    assert shown is not None
    assert (shown.columns, shown.total_rows, shown.truncated) == (
        ["id", "article_jissue"],
        53,
        True,
    )
    assert len(shown.rows) == 50 and shown.rows[:2] == [[18298, "NULL"], [26475, "NULL"]]


def test_a_result_whose_shown_rows_hold_too_much_text_is_refused() -> None:
    """The shown rows are kept in the episode and sent with every answer: at most
    MAX_RESULT_CHARS of text, measured inside DuckDB before a row reaches Python."""
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    env.reset()
    for sql in (
        f"SELECT repeat('x', {MAX_RESULT_CHARS // 2 + 1}) AS s FROM range(2)",
        "SELECT repeat('x', 20000000) AS s",  # 20 MB, as one cell
        "SELECT list(range) AS l FROM range(100000)",
    ):
        refused = env.step({"operation": "query", "parameters": {"sql": sql}})
        assert refused.info["error"]["code"] == "TOO_LARGE", sql
        assert f"at most {MAX_RESULT_CHARS:,}" in refused.info["error"]["detail"]
        assert refused.observation.step == 0 and refused.observation.query_result is None
    fits = f"SELECT repeat('x', {MAX_RESULT_CHARS // 2 - 1}) AS s FROM range(2)"  # and 's'
    assert env.step({"operation": "query", "parameters": {"sql": fits}}).info.get("error") is None


def test_the_rows_measured_are_the_rows_shown() -> None:
    """A query may draw random() anew on each run: the shown rows are computed once."""
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    env.reset()
    sql = (
        "WITH s AS MATERIALIZED (SELECT random() AS r) SELECT CASE WHEN s.r < 0.5 THEN 'a' "
        "ELSE repeat('x', 20000) END AS v FROM s, range(50)"
    )
    result = env.step({"operation": "query", "parameters": {"sql": sql}})
    if result.info.get("error") is None:
        shown = result.observation.query_result
        assert shown is not None and shown.rows == [["a"]] * 50
    else:
        assert result.info["error"]["code"] == "TOO_LARGE"


def test_column_names_count_against_the_result_size() -> None:
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    env.reset()
    name = "x" * 10_000
    sql = f'WITH a AS (SELECT 1 AS "{name}") SELECT {", ".join(["*"] * 60)} FROM a'
    refused = env.step({"operation": "query", "parameters": {"sql": sql}})
    assert refused.info["error"]["code"] == "TOO_LARGE"
    assert "600,000 characters" in refused.info["error"]["detail"]


def test_rows_past_the_shown_ones_are_counted_without_reaching_python() -> None:
    """Row 51 of 60 holds 20 MB: it is counted, never fetched."""
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    env.reset()
    sql = "SELECT CASE WHEN range = 50 THEN repeat('x', 20000000) ELSE 'a' END AS s FROM range(60)"
    tracemalloc.start()
    try:
        result = env.step({"operation": "query", "parameters": {"sql": sql}})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    shown = result.observation.query_result
    assert shown is not None and (shown.total_rows, shown.truncated) == (60, True)
    assert shown.rows == [["a"]] * 50
    assert peak < 5_000_000  # bytes Python allocated during the step


def test_only_a_query_step_carries_a_result() -> None:
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    assert env.reset().observation.query_result is None
    asked = env.step({"operation": "query", "parameters": {"sql": "SELECT 1 AS one"}})
    assert asked.observation.query_result is not None
    refused = env.step({"operation": "query", "parameters": {"sql": "SELECT nope FROM t"}})
    assert refused.info["error"]["code"] == "SQL_REFUSED"
    assert refused.observation.query_result is None
    paged = env.step({"operation": "show_rows", "parameters": {}})
    assert paged.observation.query_result is None


def _pair(task: str, builtin: dict, sql: str, seed: int | None = None) -> None:
    a, b = (DataCleaningEnv(task, seed=seed, limits=UNTIMED) for _ in range(2))
    a.reset(), b.reset()
    one = a.step(builtin)
    two = b.step({"operation": "sql", "parameters": {"sql": sql}})
    assert one.info.get("error") is None and two.info.get("error") is None
    assert a._episode.table.equals(b._episode.table)  # type: ignore[union-attr]
    assert a._episode.snapshot.values == b._episode.snapshot.values  # type: ignore[union-attr]
    assert one.reward == two.reward


def test_sql_equals_strip() -> None:
    _pair(
        "rayyan",
        {"operation": "strip", "parameters": {"column": "article_title"}},
        "UPDATE t SET article_title = trim(article_title, ' ')",
    )


def test_sql_equals_set_cell() -> None:
    _pair(
        "rayyan",
        {
            "operation": "set_cell",
            "parameters": {"row_id": 235295, "column": "article_pagination", "value": "12-19"},
        },
        "UPDATE t SET article_pagination = '12-19' WHERE id = 235295",
    )


def test_sql_equals_drop_rows() -> None:
    _pair(
        "rayyan",
        {"operation": "drop_rows", "parameters": {"row_ids": [235295, 498345]}},
        "DELETE FROM t WHERE id IN (235295, 498345)",
    )


def test_sql_equals_map() -> None:
    _pair(
        "rayyan",
        {
            "operation": "map",
            "parameters": {"column": "article_language", "mapping": {"eng": "English"}},
        },
        "UPDATE t SET article_language = 'English' WHERE article_language = 'eng'",
    )


def test_same_statements_give_identical_results() -> None:
    results = []
    for _ in range(2):
        env = DataCleaningEnv("rayyan", limits=UNTIMED)
        env.reset()
        sql = "UPDATE t SET journal_title = upper(journal_title) WHERE id % 7 = 0"
        results.append(env.step({"operation": "sql", "parameters": {"sql": sql}}).json_bytes())
    assert results[0].replace(b"-local-1", b"") == results[1].replace(b"-local-1", b"")


def test_a_sample_is_seeded_so_two_episodes_answer_alike() -> None:
    # DuckDB draws an unseeded sample from the operating system's entropy: refused, with
    # how to seed it; a seeded one repeats, so the episodes' answers are byte-identical.
    unseeded = (
        "UPDATE t SET article_jvolumn = -1 "
        "WHERE rowid IN (SELECT rowid FROM t USING SAMPLE 10% (bernoulli))"
    )
    seeded = unseeded.replace("(bernoulli)", "(bernoulli, 7)")
    query = "SELECT id FROM t USING SAMPLE 10% (bernoulli, 7) ORDER BY id"
    answers = []
    for _ in range(2):
        env = DataCleaningEnv("rayyan", limits=UNTIMED)
        before = env.reset()
        refused = env.step({"operation": "sql", "parameters": {"sql": unseeded}})
        assert refused.info["error"]["code"] == "SQL_REFUSED"
        assert "USING SAMPLE 10% (bernoulli, 7)" in refused.info["error"]["detail"]
        assert (refused.observation.step, refused.reward) == (0, before.reward)
        for sql in (seeded, query):
            operation = "sql" if sql.startswith("UPDATE") else "query"
            step = env.step({"operation": operation, "parameters": {"sql": sql}})
            assert step.info.get("error") is None
            answers.append(step.json_bytes().replace(b"-local-1", b""))
    assert answers[:2] == answers[2:]


def test_sql_equals_fill_missing_with_a_constant() -> None:
    _pair(
        "rayyan",
        {
            "operation": "fill_missing",
            "parameters": {"strategy": "constant", "column": "article_jvolumn", "value": -1},
        },
        "UPDATE t SET article_jvolumn = -1 WHERE article_jvolumn IS NULL",
    )


def test_sql_equals_fill_missing_of_a_text_column() -> None:
    _pair(
        "rayyan",
        {
            "operation": "fill_missing",
            "parameters": {"strategy": "constant", "column": "article_pagination", "value": "?"},
        },
        "UPDATE t SET article_pagination = '?' WHERE article_pagination IS NULL",
    )


def test_an_untimed_step_runs_its_sql() -> None:
    # A measurement plays untimed (`untimed_limits`: an infinite deadline), its SQL too:
    # the worker waits for the answer and sets no interrupt timer
    # (tests/unit/sandbox/test_sql_jobs.py).
    from dataclean_env.engine.episode import Episode
    from dataclean_env.schemas import Action
    from dataclean_env.tasks import default_registry

    episode = Episode("untimed", default_registry().make("rayyan"), UNTIMED)
    result = episode.step(Action(operation="query", parameters={"sql": "SELECT count(*) FROM t"}))
    assert result.observation.query_result is not None
    assert result.observation.query_result.rows == [[1000]]


def test_statements_are_parsed_without_duckdb_s_default_database(monkeypatch) -> None:
    # DuckDB's module-level parser opens its default database on first use (it autoloads
    # extensions): a third of a second, a second under load, inside the first SQL step's
    # time limit. The sandbox parses with a connection of its own, made at import.
    import duckdb

    from dataclean_env.operations import sql

    def default_database(*_: object) -> None:
        raise AssertionError("duckdb's default database was opened")

    monkeypatch.setattr(duckdb, "extract_statements", default_database)
    monkeypatch.setattr(duckdb, "default_connection", default_database, raising=False)
    select = {duckdb.StatementType.SELECT}
    assert sql.statements_of("SELECT 1; SELECT 2", select, 2) == ["SELECT 1;", " SELECT 2"]


def test_sql_without_a_worker_is_unavailable_and_changes_nothing(monkeypatch) -> None:
    # The sandbox's processes cannot start (a job module fails to import): a 503 with
    # Retry-After, not a refusal of the agent's SQL, and nothing changed.
    from dataclean_env.operations import sql
    from dataclean_env.sandbox.pool import WorkerPool

    broken = WorkerPool(1, 2**20, 0.2, preload=["dataclean_env.no_such_module"])
    monkeypatch.setattr(sql, "sandbox_pool", lambda: broken)
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    before = env.reset()
    result = env.step({"operation": "query", "parameters": {"sql": "SELECT 1"}})
    assert result.info["error"]["code"] == "SQL_UNAVAILABLE"
    assert (result.observation.step, result.reward) == (0, before.reward)


def test_a_sql_result_past_the_table_s_text_limit_is_refused_before_it_leaves_duckdb() -> None:
    # 20 MB of text (1,000 rows of 20,000 characters): measured in the sandbox, so the
    # rows never reach this process.
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    before = env.reset()
    tracemalloc.start()
    try:
        sql = "UPDATE t SET article_title = repeat('x', 20000)"
        result = env.step({"operation": "sql", "parameters": {"sql": sql}})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.info["error"]["code"] == "TOO_LARGE"
    assert "characters of text; at most 500000" in result.info["error"]["detail"]
    assert (result.observation.step, result.reward) == (0, before.reward)
    assert peak < 10_000_000  # bytes Python allocated during the step


def test_a_result_value_python_would_misstate_is_written_as_duckdb_writes_it() -> None:
    # Python's forms would show an INTERVAL as 30-day months (1 year as 360 days), an
    # infinite date as 9999-12-31, an infinite number as JSON null and a list, struct, map
    # or blob as Python's repr (a date in a list as `datetime.date(2020, 1, 1)`).
    env = DataCleaningEnv("rayyan", limits=UNTIMED)
    env.reset()
    sql = (
        "SELECT INTERVAL '1 year 2 days 3 seconds' AS i, 'infinity'::DATE AS d, "
        "'-infinity'::TIMESTAMP AS ts, 'infinity'::DOUBLE AS f, -'inf'::DOUBLE AS g, "
        "DATE '2024-01-02' AS day, TIMESTAMP '2024-01-02 03:04:05' AS at, id AS i, "
        "['2020-01-01'::DATE] AS days, {'i': INTERVAL 1 MONTH, 's': 'NULL', 'n': NULL} AS s, "
        "MAP {DATE '2020-01-01': 1} AS m, '\\xFF'::BLOB AS b FROM t ORDER BY id LIMIT 1"
    )
    result = env.step({"operation": "query", "parameters": {"sql": sql}})
    shown = json.loads(result.json_bytes())["observation"]["query_result"]
    assert shown["columns"] == ["i", "d", "ts", "f", "g", "day", "at", "i", "days", "s", "m", "b"]
    assert shown["rows"] == [
        [
            "1 year 2 days 00:00:03",
            "infinity",
            "-infinity",
            "inf",
            "-inf",
            "2024-01-02",
            "2024-01-02T03:04:05",
            1266,
            "[2020-01-01]",
            "{'i': 1 month, 's': 'NULL', 'n': NULL}",
            "{2020-01-01=1}",
            "\\xFF",
        ]
    ]
