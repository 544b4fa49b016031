"""The DuckDB jobs, called in this process as a worker calls them."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import pandas as pd
import pytest

from dataclean_env.errors import SqlRefused, StepTimeLimit, TooLarge
from dataclean_env.sandbox.sql_jobs import run_query, run_statements

TABLE = pd.DataFrame({"id": [1, 2, 3], "city": [" Oslo", "Bergen ", None]})


def test_an_untimed_job_starts_no_interrupt_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    # A timer of an infinite interval dies in its thread (OverflowError): none may start.
    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    started = threading.active_count()
    assert run_query(TABLE, "SELECT count(*) AS n FROM t", math.inf) == (["n"], [(3,)], 1)
    assert failures == [] and threading.active_count() == started


def test_statements_answer_every_row_in_rowid_order() -> None:
    texts = ["UPDATE t SET city = trim(city)", "DELETE FROM t WHERE id = 2"]
    rows = run_statements(TABLE, texts, ["id", "city"], None, 30.0)
    assert rows == [(0, 1, "Oslo"), (2, 3, None)]


def test_a_job_past_its_time_is_refused_however_it_ends() -> None:
    # Interrupted by the timer, or done after its time: refused as a step past its limit.
    with pytest.raises(StepTimeLimit):
        run_query(TABLE, "SELECT count(*) FROM range(3000000)", 1e-9)


THOUSAND = pd.DataFrame({"x": range(1000)})
# Every form of DuckDB's sampling clause, without a seed: each draws from the operating
# system's entropy, so the same query in two fresh sandboxes would answer differently.
UNSEEDED = [
    "FROM t USING SAMPLE 10% (bernoulli)",
    "FROM t USING SAMPLE 50% (system)",
    "FROM t TABLESAMPLE 10%",
    "FROM t USING SAMPLE 10 ROWS",
    "FROM (SELECT x FROM t USING SAMPLE 10 PERCENT (reservoir)) AS s",
    "FROM t WHERE x IN (SELECT x FROM t USING SAMPLE 10% (bernoulli))",
]


@pytest.mark.parametrize("sample", UNSEEDED)
def test_an_unseeded_sample_is_refused_with_how_to_seed_it(sample: str) -> None:
    with pytest.raises(SqlRefused, match=r"USING SAMPLE 10% \(bernoulli, 7\)"):
        run_query(THOUSAND, f"SELECT count(*) AS n {sample}", math.inf)


def test_an_unseeded_sample_in_an_update_is_refused_before_any_statement_runs() -> None:
    texts = [
        "DELETE FROM t WHERE x = 0",
        "UPDATE t SET x = -1 WHERE rowid IN (SELECT rowid FROM t USING SAMPLE 10% (bernoulli))",
    ]
    with pytest.raises(SqlRefused, match="seed"):
        run_statements(THOUSAND, texts, ["x"], None, math.inf)


def test_the_samples_of_a_deeply_nested_plan_are_found() -> None:
    # Its plan's JSON nests past Python's recursion limit: it is read inside DuckDB.
    nested = "SELECT * FROM " + "(SELECT * FROM " * 900 + "t USING SAMPLE 1 ROWS)" + ")" * 899
    with pytest.raises(SqlRefused, match="seed"):
        run_query(THOUSAND, nested, math.inf)
    assert run_query(THOUSAND, nested.replace("1 ROWS", "1 ROWS (reservoir, 1)"), math.inf)[1:] == (
        [(417,)],
        1,
    )


def test_a_seeded_sample_and_random_give_the_same_rows_in_every_fresh_sandbox() -> None:
    queries = {
        "SELECT count(*), sum(x) FROM t USING SAMPLE 10% (bernoulli, 7)": [(102, 53341)],
        "SELECT count(*), sum(x) FROM t USING SAMPLE reservoir(10 ROWS) REPEATABLE (3)": [
            (10, 4937)
        ],
        "SELECT count(*) FROM range(100000) USING SAMPLE 50% (system, 5)": [(49152,)],
        "SELECT round(sum(random()), 6) FROM t": [(503.198787,)],
    }
    for query, rows in queries.items():
        for _ in range(2):  # each run a fresh database
            assert run_query(THOUSAND, query, math.inf)[1] == rows, query
    update = (
        "UPDATE t SET x = -1 WHERE rowid IN (SELECT rowid FROM t USING SAMPLE 1% (bernoulli, 7))"
    )
    changed = [rowid for rowid, x in run_statements(THOUSAND, [update], ["x"], None, 30.0) if x < 0]
    assert changed == [167, 443, 663, 672, 699, 715, 827, 916]
    assert run_statements(THOUSAND, [update], ["x"], None, 30.0) == run_statements(
        THOUSAND, [update], ["x"], None, 30.0
    )


def test_a_job_reads_no_file_not_even_in_duckdb_s_temp_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DuckDB allow-lists its temp directory (`.tmp` in the working directory by default)
    # even with external access off, and every worker of the server shares it: another
    # client's spilled rows would be readable there.
    monkeypatch.chdir(tmp_path)
    allowed = "SELECT value FROM duckdb_settings() WHERE name = 'allowed_directories'"
    assert run_query(TABLE, allowed, math.inf)[1] == [("[]",)]
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "duckdb_temp_block-1.tmp").write_text('{"rows": "secret"}')
    for path in (".tmp/*.tmp", f"{tmp_path}/.tmp/duckdb_temp_block-1.tmp"):
        for reader in ("read_json", "read_text", "read_blob", "read_csv", "glob"):
            with pytest.raises(SqlRefused, match="Cannot access file"):
                run_query(TABLE, f"SELECT * FROM {reader}('{path}')", math.inf)


def test_a_query_past_the_memory_limit_is_too_large_and_spills_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    big_sort = (
        "SELECT count(*) FROM (SELECT range, repeat('x', 100) AS s FROM range(4000000) "
        "ORDER BY s, range DESC)"
    )
    with pytest.raises(TooLarge, match="more memory than its sandbox has"):
        run_query(TABLE, big_sort, math.inf)
    assert list(tmp_path.iterdir()) == []
