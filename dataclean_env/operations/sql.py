"""SQL over the episode's table: `query` (one read-only SELECT) and `sql` (UPDATE/DELETE).

DuckDB runs the statements in a sandbox built fresh for each step: an in-memory database
holding only the table `t`, no file or network access, no extension install or autoload,
no replacement scans of Python objects, one thread, a memory limit, and its configuration
locked before any client text runs. DuckDB's own parser classifies every statement first;
a timer interrupts the connection at the step's deadline. The table is graded cell by cell
like any step: `sql` rewrites cells through the same path as `set_cell` and `drop_rows`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb
import pandas as pd
from pydantic import Field

from dataclean_env.engine.limits import EngineLimits, raise_time_limit, remaining
from dataclean_env.engine.values import MISSING, Kind, json_cell
from dataclean_env.errors import InvalidParameters, SqlRefused, TooLarge
from dataclean_env.operations.column_checks import rewrite_columns, take_rows
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation
from dataclean_env.schemas import QueryResult

MAX_SQL_CHARS = 20_000
MAX_STATEMENTS = 20
MAX_RESULT_ROWS = 50
# The shown rows' text (every cell as VARCHAR), at most what a table may hold: an episode
# keeps its last result and sends it with every answer. Measured inside DuckDB, so no row
# reaches Python before it passes.
MAX_RESULT_CHARS = EngineLimits.max_table_chars
_TEXT_OF_EACH_COLUMN = (
    "sum(coalesce(length(TRY_CAST(COLUMNS(*) AS VARCHAR)), "
    "octet_length(TRY_CAST(COLUMNS(*) AS BLOB)), 0))"
)
MEMORY_LIMIT = "256MB"
SQL_SECONDS = 2.0  # when the caller gives no deadline
SANDBOX: dict[str, str | int | float | list[str]] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "python_enable_replacements": False,
    "threads": 1,
    "memory_limit": MEMORY_LIMIT,
}
_STATEMENT_TYPE = duckdb.StatementType
# The parser's own connection, made once here and never given a statement to run: the
# module-level `duckdb.extract_statements` opens DuckDB's default database on first use,
# which autoloads extensions and took a third of a second, a second under load, inside the
# first SQL step's time limit. A connection is not safe for threads at once: the lock.
_PARSER = duckdb.connect(":memory:", config=dict(SANDBOX))
_PARSER_LOCK = threading.Lock()


def statements_of(text: str, allowed: set[Any], limit: int) -> list[str]:
    """The statements of `text` as DuckDB's parser splits them, each of an allowed type."""
    try:
        with _PARSER_LOCK:
            statements = _PARSER.extract_statements(text)
    except duckdb.Error as exc:
        raise SqlRefused(f"the SQL does not parse: {exc}") from None
    if not statements:
        raise SqlRefused("no SQL statement given")
    if len(statements) > limit:
        raise SqlRefused(f"{len(statements)} statements; at most {limit}")
    names = sorted(t.name for t in allowed)
    for statement in statements:
        if statement.type not in allowed:
            raise SqlRefused(f"{statement.type.name} statements are not allowed here; only {names}")
    return [statement.query for statement in statements]


@contextmanager
def sandbox(table: pd.DataFrame, deadline: float | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A fresh locked-down connection holding `table` as `t`, interrupted at `deadline`."""
    left = remaining(deadline)
    seconds = SQL_SECONDS if left is None else left
    connection = new_connection()
    # An untimed step (a measurement's, `limits.untimed_limits`) is never interrupted.
    timer = None if math.isinf(seconds) else threading.Timer(seconds, connection.interrupt)
    try:
        load_table(connection, table)
        if timer is not None:
            timer.start()
        yield connection
    except duckdb.InterruptException:
        raise_time_limit()
    except duckdb.OutOfMemoryException:
        raise TooLarge(f"the SQL needs more than {MEMORY_LIMIT} of memory") from None
    except duckdb.Error as exc:
        raise SqlRefused(f"{type(exc).__name__}: {exc}") from None
    finally:
        if timer is not None:
            timer.cancel()
        connection.close()


def new_connection() -> duckdb.DuckDBPyConnection:
    """A fresh in-memory database configured as `SANDBOX` (its configuration not yet locked)."""
    return duckdb.connect(":memory:", config=dict(SANDBOX))


def load_table(connection: duckdb.DuckDBPyConnection, table: pd.DataFrame) -> None:
    """Copy `table` into `connection` as `t`, then lock its configuration."""
    connection.register("frame", table)
    connection.execute("CREATE TABLE t AS SELECT * FROM frame")
    connection.unregister("frame")
    connection.execute("SELECT setseed(0)")  # random() gives the same rows every step
    connection.execute("SET lock_configuration = true")


class QueryParams(Params):
    sql: str = Field(
        min_length=1,
        max_length=MAX_SQL_CHARS,
        description="One read-only SELECT over table t (the current table, key column included).",
    )


@operation(
    "query",
    QueryParams,
    rank=5,
    repeatable=True,
    slow=True,
    description=(
        "One read-only SELECT over table t (the current table; NULL is a missing cell). "
        f"Answers its columns, up to {MAX_RESULT_ROWS} rows, total_rows and truncated (the "
        "observation's query_result); changes nothing."
    ),
)
def query(table: pd.DataFrame, params: QueryParams, ctx: OpContext) -> OpResult:
    (text,) = statements_of(params.sql, {_STATEMENT_TYPE.SELECT}, 1)
    with sandbox(table, ctx.deadline) as connection:
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
        rows = head.fetchall()
        total = len(rows)
        if total == MAX_RESULT_ROWS:  # counted by DuckDB, not fetched
            total = relation.aggregate("count(*)").fetchall()[0][0]
    shown = [[_json(v) for v in row] for row in rows]
    # model_construct: the fields are built here, of the right types already.
    result = QueryResult.model_construct(
        columns=columns, rows=shown, total_rows=total, truncated=total > MAX_RESULT_ROWS
    )
    found = f"Query returned {total} row{'' if total == 1 else 's'}"
    message = found + (f"; the first {len(shown)} are shown." if result.truncated else ".")
    return OpResult(table, message, query_result=result)


def _check_size(chars: int) -> None:
    if chars > MAX_RESULT_CHARS:
        raise TooLarge(
            f"the result's names and first {MAX_RESULT_ROWS} rows hold {chars:,} characters; "
            f"at most {MAX_RESULT_CHARS:,} (select fewer or shorter values, e.g. left(x, 100))"
        )


def _json(value: Any) -> Any:
    """A result cell as the observation writes cells (NULL for missing, ISO dates)."""
    if value is None:
        return json_cell(MISSING)
    if isinstance(value, (str, int, float, bool)):
        return json_cell(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


class SqlParams(Params):
    sql: str = Field(
        min_length=1,
        max_length=MAX_SQL_CHARS,
        description=(
            f"Up to {MAX_STATEMENTS} UPDATE t ... / DELETE FROM t ... statements separated "
            "by ';', applied all or nothing. The key column cannot change; rows keep their "
            "order; a column keeps its type."
        ),
    )


@operation(
    "sql",
    SqlParams,
    rank=2,
    repeatable=True,
    slow=True,
    description=(
        f"Up to {MAX_STATEMENTS} UPDATE t ... / DELETE FROM t ... statements separated by ';', "
        "all or nothing; the key column and the row order stay."
    ),
)
def sql(table: pd.DataFrame, params: SqlParams, ctx: OpContext) -> OpResult:
    allowed = {_STATEMENT_TYPE.UPDATE, _STATEMENT_TYPE.DELETE}
    texts = statements_of(params.sql, allowed, MAX_STATEMENTS)
    snapshot = ctx.snapshot_of(table)
    columns = list(snapshot.columns)
    with sandbox(table, ctx.deadline) as connection:
        for text in texts:
            connection.execute(text)
        names = ", ".join(_quoted(c) for c in columns)
        cursor = connection.execute(f"SELECT rowid, {names} FROM t ORDER BY rowid")
        rows = cursor.fetchall()
    by_column = list(zip(*rows, strict=True)) if rows else [()] * (len(columns) + 1)
    keep = list(by_column[0])
    kept_snapshot = snapshot.with_rows(keep) if len(keep) != snapshot.n_rows else snapshot
    kept = take_rows(table, keep) if len(keep) != snapshot.n_rows else table
    new_values = {}
    for column, values in zip(columns, by_column[1:], strict=True):
        old = kept_snapshot.values[column]
        if _unchanged(values, old):
            new_values[column] = old
            continue
        cells = [_cell(v) for v in values]
        gaps = cells.count(MISSING)
        holds_gaps = snapshot.kinds[column] not in (Kind.INT, Kind.BOOL)
        if gaps and not holds_gaps and gaps != kept_snapshot.values[column].count(MISSING):
            raise InvalidParameters(
                f"column {column!r} ({snapshot.kinds[column]}) cannot hold empty cells"
            )
        new_values[column] = _same_form(cells, kept_snapshot.values[column])
    for column in ctx.protected_columns:
        if column in new_values and new_values[column] != kept_snapshot.values[column]:
            raise SqlRefused(f"column {column!r} is the task's key column; it cannot change")
    context = OpContext(
        ctx.target_schema, kept_snapshot, ctx.protected_columns, ctx.allowed_operations
    )
    rewritten = rewrite_columns(kept, context, new_values, "sql")
    dropped = snapshot.n_rows - len(keep)
    if kept is table:
        return rewritten
    message = f"sql: dropped {dropped} rows; " + rewritten.message.removeprefix("sql: ")
    return OpResult(rewritten.output, message, rewritten.snapshot or kept_snapshot)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _cell(value: Any) -> Any:
    if value is None or (isinstance(value, float) and value != value):
        return MISSING
    return value


def _unchanged(values: tuple[Any, ...], old: list[Any]) -> bool:
    """Whether DuckDB's `values` are the snapshot's `old` cells (NULL for missing): one
    C-level comparison instead of a Python call per cell for the columns a step left alone."""
    return list(values) == [None if o is MISSING else o for o in old]


def _same_form(cells: list[Any], old: list[Any]) -> list[Any]:
    """`cells` with each value equal to the old one replaced by the old object, so dates
    and numbers that did not change keep the snapshot's exact form."""
    return [o if (c is o or c == o) else c for c, o in zip(cells, old, strict=True)]


def fd_violations_query(determinant: str, dependent: str, limit: int = MAX_RESULT_ROWS) -> str:
    """A `query` that lists the values of `determinant` mapped to more than one value of
    `dependent` (functional-dependency violations), most-used dependent value first."""
    a, b = _quoted(determinant), _quoted(dependent)
    return (
        f"SELECT {a} AS determinant, {b} AS dependent, count(*) AS n FROM t "
        f"WHERE {a} IN (SELECT {a} FROM t WHERE {a} IS NOT NULL GROUP BY {a} "
        f"HAVING count(DISTINCT {b}) > 1) "
        f"GROUP BY {a}, {b} ORDER BY {a}, n DESC, {b} LIMIT {int(limit)}"
    )
