"""Database engines and migrations: SQLite (a file in WAL mode) by default, PostgreSQL when
`DATABASE_URL` says so (psycopg 3). Alembic brings the schema to head on every open.

SQLite: every transaction starts with BEGIN IMMEDIATE, so concurrent writers queue on the
database lock (waiting up to `BUSY_TIMEOUT_S`) instead of failing on a lock upgrade, and
`synchronous=FULL` makes a commit durable before it returns, so what was acknowledged
survives a crash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
BUSY_TIMEOUT_S = 30.0
MIGRATION_LOCK = 7_406_221  # any constant: the advisory lock's key


def database_url(database_url: str, sqlite_path: Path) -> str:
    """The SQLAlchemy URL: `database_url` if set (postgres:// and postgresql:// mean
    psycopg 3), else the SQLite file."""
    url = database_url.strip()
    if not url:
        return f"sqlite+pysqlite:///{sqlite_path}"
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def connect(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False}
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself (pysqlite would defer it).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration (idempotent; run on every start)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # Servers starting together on one database migrate one after the other (SQLite's
            # BEGIN IMMEDIATE already does this).
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
