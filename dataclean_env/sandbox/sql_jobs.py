"""The DuckDB side of `query` and `sql`, run in a sandbox worker process (`sandbox.pool`).

Each job builds a fresh in-memory database holding only the table `t`: no file or network
access, no extension install or autoload, no replacement scans of Python objects, one
thread, a memory limit with no spilling to disk, and its configuration locked before any
client text runs; a statement that samples without a seed is refused before it runs
(`check_samples`). A timer
interrupts the connection at the job's time; an answer computed past it is refused all the
same. The jobs take and give plain values (a DataFrame, tuples of cells), so they cross
the process boundary as pickles; DuckDB's errors come back as the engine's typed errors.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb
import pandas as pd

from dataclean_env.errors import SqlRefused, TooLarge
from dataclean_env.table.limits import EngineLimits, raise_time_limit

MAX_RESULT_ROWS = 50
# The shown rows' text (every cell as VARCHAR), at most what a table may hold: an episode
# keeps its last result and sends it with every answer. Measured inside DuckDB, so no row
# leaves the sandbox before it passes.
MAX_RESULT_CHARS = EngineLimits.max_table_chars
_TEXT_OF_EACH_COLUMN = (
    "sum(coalesce(length(TRY_CAST(COLUMNS(*) AS VARCHAR)), "
    "octet_length(TRY_CAST(COLUMNS(*) AS BLOB)), 0))"
)
MEMORY_LIMIT = "256MB"  # DuckDB's buffers; the worker's process cap bounds everything else
SANDBOX: dict[str, str | int | float | list[str]] = {
    # No external access: set on the open connection (`new_connection`), not here. Set at
    # start, DuckDB allow-lists the database's path resolved in the working directory
    # (`allowed_paths` then shows the server's directory to any query).
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "python_enable_replacements": False,
    "threads": 1,
    "memory_limit": MEMORY_LIMIT,
    # No spilling: DuckDB allow-lists its temp directory (default `.tmp` in the working
    # directory, shared by every worker) even with external access off, so a query could
    # read another's spilled rows there. Past the memory limit a query is refused instead.
    "temp_directory": "",
    # DuckDB's default lies in the server's home directory, and any query may read a
    # setting (current_setting, duckdb_settings()): a path that tells nothing, and unused.
    "secret_directory": "/nonexistent",
    "allow_persistent_secrets": False,
}

QueryAnswer = tuple[list[str], list[tuple[Any, ...]], int]  # columns, shown rows, total rows


def warm_up() -> None:
    """Open and close one sandbox, so a worker's cap counts from DuckDB's settled size."""
    run_query(pd.DataFrame({"x": [1]}), "SELECT x FROM t", math.inf)


def run_query(table: pd.DataFrame, text: str, seconds: float) -> QueryAnswer:
    """One SELECT's columns, first `MAX_RESULT_ROWS` rows and total row count."""
    with sandbox(table, seconds) as connection:
        check_samples(connection, text)
        relation = connection.sql(text)
        columns = relation.columns
        names = sum(map(len, columns))
        _check_size(names)  # before the query runs at all
        # The rows shown, computed once and kept in DuckDB (a query may draw random() anew
        # on each run): measured there, then fetched.
        relation.limit(MAX_RESULT_ROWS).create("shown")
        head = connection.table("shown")
        texts = head.aggregate(_TEXT_OF_EACH_COLUMN).fetchall()[0]
        _check_size(names + sum(n or 0 for n in texts))
        rows = _shown_rows(connection, head)
        total = len(rows)
        if total == MAX_RESULT_ROWS:  # counted by DuckDB, not fetched
            total = relation.aggregate("count(*)").fetchall()[0][0]
    return columns, rows, total


# Result types whose Python form would misstate a value: an INTERVAL becomes a timedelta of
# 30-day months, a list, struct, map or blob Python's repr. DuckDB's own text is shown.
_SHOWN_AS_TEXT = frozenset({"interval", "list", "struct", "map", "array", "union", "blob", "bit"})
# Dates and timestamps Python has no infinity for (it would show the largest or smallest).
_TEMPORAL = frozenset(
    {"date", "timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns", "timestamp with time zone"}
)


def _shown_rows(
    connection: duckdb.DuckDBPyConnection, head: duckdb.DuckDBPyRelation
) -> list[tuple[Any, ...]]:
    """The rows of `head`, each value whose Python form would misstate it written as DuckDB
    writes it (an interval, a nested value, an infinite date)."""
    kinds = [t.id for t in head.types]
    temporal = [i for i, kind in enumerate(kinds) if kind in _TEMPORAL]
    if _SHOWN_AS_TEXT.isdisjoint(kinds) and not temporal:
        return head.fetchall()
    names = [f"c{i}" for i in range(len(kinds))]  # by position: result names may repeat
    shown = [
        f"CAST({n} AS VARCHAR)" if kind in _SHOWN_AS_TEXT else n
        for n, kind in zip(names, kinds, strict=True)
    ]
    # Beside each temporal column, its text where it is infinite (NULL elsewhere).
    infinite = [f"CASE WHEN isinf(c{i}) THEN CAST(c{i} AS VARCHAR) END" for i in temporal]
    query = f"SELECT {', '.join(shown + infinite)} FROM shown AS s({', '.join(names)})"
    rows = []
    for row in connection.sql(query).fetchall():
        cells = list(row[: len(names)])
        for i, text in zip(temporal, row[len(names) :], strict=True):
            if text is not None:
                cells[i] = text
        rows.append(tuple(cells))
    return rows


def run_statements(
    table: pd.DataFrame,
    texts: list[str],
    columns: list[str],
    max_text_chars: int | None,
    seconds: float,
) -> list[tuple[Any, ...]]:
    """Every row of `t` after the UPDATE/DELETE `texts`, as (rowid, *columns), in rowid order;
    TooLarge, before a row is fetched, if its text columns hold more than `max_text_chars`."""
    with sandbox(table, seconds) as connection:
        for text in texts:  # all checked before any runs
            check_samples(connection, text)
        for text in texts:
            connection.execute(text)
        if max_text_chars is not None:
            _check_text(connection, max_text_chars)
        names = ", ".join(quoted(c) for c in columns)
        return connection.execute(f"SELECT rowid, {names} FROM t ORDER BY rowid").fetchall()


@contextmanager
def sandbox(table: pd.DataFrame, seconds: float) -> Iterator[duckdb.DuckDBPyConnection]:
    """A fresh locked-down connection holding `table` as `t`, interrupted after `seconds`
    (math.inf: never, for an untimed measurement)."""
    connection = new_connection()
    # A timer of an infinite interval would die in its thread (OverflowError): none then.
    timer = None if math.isinf(seconds) else threading.Timer(seconds, connection.interrupt)
    try:
        load_table(connection, table)
        started = time.monotonic()
        if timer is not None:
            timer.start()
        yield connection
        if time.monotonic() - started > seconds:  # done, but after its time
            raise_time_limit()
    except duckdb.InterruptException:
        raise_time_limit()
    except (duckdb.OutOfMemoryException, MemoryError):
        raise TooLarge(
            f"the SQL needs more memory than its sandbox has ({MEMORY_LIMIT} for DuckDB's "
            "buffers and a cap on the whole process); select or build less at once"
        ) from None
    except duckdb.Error as exc:
        raise SqlRefused(f"{type(exc).__name__}: {exc}") from None
    except (OverflowError, ValueError, TypeError, UnicodeError) as exc:
        # A value DuckDB computed that its Python conversion cannot give (in DuckDB 1.x, an
        # interval of two billion months overflowed a timedelta; intervals now come as text).
        raise SqlRefused(f"a result value cannot be read: {type(exc).__name__}: {exc}") from None
    finally:
        if timer is not None:
            timer.cancel()
        connection.close()


def new_connection() -> duckdb.DuckDBPyConnection:
    """A fresh in-memory database configured as `SANDBOX`, external access off (its
    configuration not yet locked). No setting a query may read names a server directory."""
    connection = duckdb.connect(":memory:", config=dict(SANDBOX))
    connection.execute("SET enable_external_access = false")
    return connection


def load_table(connection: duckdb.DuckDBPyConnection, table: pd.DataFrame) -> None:
    """Copy `table` into `connection` as `t`, then lock its configuration."""
    connection.register("frame", table)
    connection.execute("CREATE TABLE t AS SELECT * FROM frame")
    connection.unregister("frame")
    connection.execute("SELECT setseed(0)")  # random() gives the same rows every step
    connection.execute("SET lock_configuration = true")


def check_samples(connection: duckdb.DuckDBPyConnection, text: str) -> None:
    """SqlRefused if `text` samples without a seed: DuckDB draws such a sample from the
    operating system's entropy (neither `setseed` nor any setting reaches it), so the same
    step would answer differently in every episode. DuckDB's own planner finds the samples:
    its logical plan as JSON holds each one's options, `repeatable` false when no seed was
    given (the parse tree's JSON would too, but DuckDB gives it only for a SELECT). The plan
    is read in DuckDB: a deeply nested one is past Python's JSON recursion limit."""
    failure, message, unseeded = connection.execute(
        "SELECT plan ->> 'error_type', plan ->> 'error_message', "
        "list_contains(plan -> '$..repeatable', 'false'::JSON) "
        "FROM (SELECT json_serialize_plan(?, optimize := false) AS plan)",
        [text],
    ).fetchall()[0]
    if failure is not None:  # it does not bind: running it would fail the same way
        raise SqlRefused(f"{failure} error: {message}")
    if unseeded:
        raise SqlRefused(
            "a sample needs a seed, so it draws the same rows every time: e.g. "
            "USING SAMPLE 10% (bernoulli, 7) or USING SAMPLE 10 ROWS (reservoir, 7)"
        )


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _check_text(connection: duckdb.DuckDBPyConnection, most: int) -> None:
    """The engine's table limit, measured in DuckDB: characters in the text columns."""
    table = connection.table("t")
    kinds = zip(table.columns, table.types, strict=True)
    texts = [quoted(c) for c, kind in kinds if str(kind) == "VARCHAR"]
    if not texts:
        return
    sums = " + ".join(f"coalesce(sum(length({c})), 0)" for c in texts)
    chars = int(table.aggregate(sums).fetchall()[0][0])
    if chars > most:
        raise TooLarge(f"the table would hold {chars} characters of text; at most {most}")


def _check_size(chars: int) -> None:
    if chars > MAX_RESULT_CHARS:
        raise TooLarge(
            f"the result's names and first {MAX_RESULT_ROWS} rows hold {chars:,} characters; "
            f"at most {MAX_RESULT_CHARS:,} (select fewer or shorter values, e.g. left(x, 100))"
        )
