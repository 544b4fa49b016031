"""SQL over the episode's table: `query` (one read-only SELECT) and `sql` (UPDATE/DELETE).

DuckDB's own parser classifies every statement here first; the statements then run in a
sandbox worker process (`dataclean_env.sandbox`): a fresh locked-down DuckDB database per
step holding only the table `t`, in a process whose memory is capped and which is ended
if the step runs past its deadline. The table is graded cell by cell like any step: `sql`
rewrites cells through the same path as `set_cell` and `drop_rows`.
"""

from __future__ import annotations

import atexit
import math
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

import duckdb
import pandas as pd
from pydantic import Field

from dataclean_env.errors import InvalidParameters, SqlRefused, SqlUnavailable, TooLarge
from dataclean_env.operations.column_checks import rewrite_columns, take_rows
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation
from dataclean_env.sandbox import sql_jobs
from dataclean_env.sandbox.pool import WorkerDied, WorkerPool, WorkerTimedOut, WorkerUnavailable
from dataclean_env.sandbox.sql_jobs import MAX_RESULT_ROWS, new_connection, quoted
from dataclean_env.schemas import QueryResult
from dataclean_env.table.limits import raise_time_limit, remaining
from dataclean_env.table.values import MISSING, Kind, json_cell

T = TypeVar("T")
MAX_SQL_CHARS = 20_000
MAX_STATEMENTS = 20
SQL_SECONDS = 2.0  # when the caller gives no deadline
# At most this many SQL steps run at once in a process (the server runs at most four slow
# steps at once); more wait for a worker, and the wait is not charged to their deadline.
SANDBOX_PROCESSES = 4
SANDBOX_HEADROOM_BYTES = 512 * 2**20  # what a worker may allocate beyond its start
KILL_GRACE_SECONDS = 1.0  # past the deadline, for a query DuckDB cannot interrupt
_STATEMENT_TYPE = duckdb.StatementType
# The parser's own connection, made once here and never given a statement to run: the
# module-level `duckdb.extract_statements` opens DuckDB's default database on first use,
# which autoloads extensions and took a third of a second, a second under load, inside the
# first SQL step's time limit. A connection is not safe for threads at once: the lock.
_PARSER = new_connection()
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


@lru_cache(maxsize=1)
def sandbox_pool() -> WorkerPool:
    """This process's SQL workers, started when first needed (the server warms one)."""
    pool = WorkerPool(
        SANDBOX_PROCESSES,
        SANDBOX_HEADROOM_BYTES,
        KILL_GRACE_SECONDS,
        preload=[sql_jobs.__name__],
    )
    atexit.register(pool.close)
    return pool


def in_sandbox(job: Callable[..., T], *args: Any, deadline: float | None) -> T:
    """`job(*args, seconds)` in a sandbox worker, with the seconds left before `deadline`."""
    left = remaining(deadline)
    seconds = SQL_SECONDS if left is None else left
    try:
        return sandbox_pool().run(job, *args, seconds, seconds=seconds)
    except WorkerTimedOut:
        raise_time_limit()
    except WorkerUnavailable as exc:
        raise SqlUnavailable(f"SQL cannot run now: {exc}") from None
    except WorkerDied as exc:
        raise TooLarge(
            f"the SQL ended its sandbox process ({exc}); most likely it needs more memory "
            "than the sandbox has"
        ) from None


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
    columns, rows, total = in_sandbox(sql_jobs.run_query, table, text, deadline=ctx.deadline)
    shown = [[_json(v) for v in row] for row in rows]
    # model_construct: the fields are built here, of the right types already.
    result = QueryResult.model_construct(
        columns=columns, rows=shown, total_rows=total, truncated=total > MAX_RESULT_ROWS
    )
    found = f"Query returned {total} row{'' if total == 1 else 's'}"
    message = found + (f"; the first {len(shown)} are shown." if result.truncated else ".")
    return OpResult(table, message, query_result=result)


def _json(value: Any) -> Any:
    """A result cell as the observation writes cells (NULL for missing, ISO dates); an
    infinite number, which JSON cannot hold, as DuckDB writes it."""
    if value is None:
        return json_cell(MISSING)
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
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
    rows = in_sandbox(
        sql_jobs.run_statements, table, texts, columns, ctx.max_text_chars, deadline=ctx.deadline
    )
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
    a, b = quoted(determinant), quoted(dependent)
    return (
        f"SELECT {a} AS determinant, {b} AS dependent, count(*) AS n FROM t "
        f"WHERE {a} IN (SELECT {a} FROM t WHERE {a} IS NOT NULL GROUP BY {a} "
        f"HAVING count(DISTINCT {b}) > 1) "
        f"GROUP BY {a}, {b} ORDER BY {a}, n DESC, {b} LIMIT {int(limit)}"
    )
