"""The store the server's processes keep their limits in together: the rate limits' token
buckets and the caps' counts (episodes held, sessions open, /ws sockets per client).

Without DCE_LIMITS_DB everything is counted in this process's memory. With it, in a
database the processes share: a SQLite file (what `server --workers N` gives its processes)
or a PostgreSQL URL (replicas on several machines), through SQLAlchemy. Only what a limit
counts touches it (a reset, a session or socket opened or closed, a leaderboard run or
submission), never a step.

Counts: each process publishes its own numbers (`Settlement.rows`, absolute values per kind
and client, "" for the process's total) and reads the sum of the others'. An admission is
one transaction holding the kind's lock (a `SELECT ... FOR UPDATE` on PostgreSQL, BEGIN
IMMEDIATE on SQLite): read the others' sums, decide with this process's own state, write
this process's new rows, so two processes never both take the last place. A process's rows
carry its slot (DCE_PROCESS_INDEX) and a generation drawn at start: a process starting in a
slot deletes the slot's old rows (its predecessor's episodes and sessions died with it), and
only the generation that holds a slot is counted, so a dead or replaced process leaks
nothing past its successor's start.

A database that cannot be reached answers LimitsUnavailable (503, Retry-After): the call
that needed it is refused, nothing else is.
"""

from __future__ import annotations

import fcntl
import logging
import os
import secrets
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dataclean_env.errors import LimitsUnavailable
from dataclean_env.rate_limit import Buckets, Change
from dataclean_env.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

log = logging.getLogger(__name__)
CONNECT_TIMEOUT_S = 5  # a PostgreSQL that does not answer: refused in seconds, not minutes
BUSY_TIMEOUT_S = 10.0  # SQLite: wait this long for another process's transaction
WRITER_WAIT_S = 10.0  # SQLite: a writer waits this long for its turn (`_Writer`)
WRITER_POLL_S = 0.0005  # SQLite: how often a waiting writer tries the file's lock again
TOTAL = ""  # the client key of a process's total row (client keys are never empty)


@dataclass
class Settlement:
    """What the other processes hold of one kind (`total`, and `client`'s share), and the
    rows this process publishes for it (client -> count; "" for its total)."""

    total: int = 0
    client: int = 0
    rows: dict[str, int] = field(default_factory=dict)


class Counts:
    """Counts of this process alone: no other process holds anything. Each kind's
    settlements run one at a time."""

    shared = False

    def __init__(self) -> None:
        self._locks: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)

    @contextmanager
    def settle(self, kind: str, client: str | None = None) -> Iterator[Settlement]:
        with self._locks[kind]:
            yield Settlement()


def limits_url(value: str) -> str:
    """DCE_LIMITS_DB as a SQLAlchemy URL: a PostgreSQL URL (postgres://, postgresql:// mean
    psycopg 3) or any SQLAlchemy URL as given, else a SQLite file's path."""
    value = value.strip()
    for prefix in ("postgres://", "postgresql://"):
        if value.startswith(prefix):
            return "postgresql+psycopg://" + value[len(prefix) :]
    if "://" in value:
        return value
    return f"sqlite+pysqlite:///{value}"


def unavailable(error: Exception) -> LimitsUnavailable:
    return LimitsUnavailable(
        "the server's limit store (DCE_LIMITS_DB) cannot be reached "
        f"({type(error).__name__}), so it cannot count this call against its limits; "
        f"retry in {LimitsUnavailable.retry_after} s"
    )


def _busy() -> LimitsUnavailable:
    return LimitsUnavailable(
        f"the server's limit store (DCE_LIMITS_DB) has been busy for {WRITER_WAIT_S:g} s, so "
        f"it cannot count this call against its limits; retry in {LimitsUnavailable.retry_after} s"
    )


class LimitDatabase:
    """The shared tables, and this process's slot and generation in them. Opened on first
    use, and again on each use until an open succeeds: a store down at start-up refuses
    the calls that need it (LimitsUnavailable), not the server's start."""

    def __init__(self, url: str, slot: int) -> None:
        self.slot, self.generation = slot, secrets.token_hex(8)
        self.engine = _engine(limits_url(url))
        self.dialect = self.engine.dialect.name
        from dataclean_env.server.limits.limit_tables import (
            Statements,  # SQLAlchemy: only when used
        )

        self._statements = Statements(self.dialect)
        self._opened = False
        self._open_lock = threading.Lock()
        # SQLite has one writer at a time: they take turns here (`_Writer`), not on its lock.
        database = self.engine.url.database
        shared_file = self.dialect == "sqlite" and database not in (None, "", ":memory:")
        self._writer = _Writer(str(database)) if shared_file else None

    def _open(self, connection: Connection) -> None:
        from sqlalchemy import delete, insert

        from dataclean_env.server.limits import limit_tables as tables

        if self.dialect == "postgresql":  # processes starting together: one at a time
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({tables.LOCK})")
        tables.metadata.create_all(connection)
        for kind in tables.KINDS:
            connection.execute(
                self._insert(tables.locks).values(kind=kind).on_conflict_do_nothing()
            )
        # This slot's predecessor is gone, and what it held with it.
        connection.execute(delete(tables.counts).where(tables.counts.c.slot == self.slot))
        connection.execute(delete(tables.slots).where(tables.slots.c.slot == self.slot))
        connection.execute(insert(tables.slots).values(slot=self.slot, generation=self.generation))

    def _insert(self, table: Any) -> Any:
        """INSERT with this dialect's ON CONFLICT clauses (PostgreSQL's and SQLite's)."""
        from sqlalchemy.dialects import postgresql, sqlite

        return (postgresql if self.dialect == "postgresql" else sqlite).insert(table)

    def _writing(self) -> AbstractContextManager[None]:
        return nullcontext() if self._writer is None else self._writer()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A transaction; a database fault in it (not the caller's own error) is
        LimitsUnavailable."""
        from sqlalchemy.exc import SQLAlchemyError

        self.open()
        try:
            with self._writing(), self.engine.begin() as connection:
                yield connection
        except SQLAlchemyError as error:
            raise unavailable(error) from error

    def open(self) -> None:
        """Create the tables and take this process's slot, once; LimitsUnavailable if the
        store cannot be reached (the next use tries again)."""
        from sqlalchemy.exc import SQLAlchemyError

        if self._opened:
            return
        try:
            with self._open_lock, self._writing(), self.engine.begin() as connection:
                if not self._opened:
                    self._open(connection)
        except SQLAlchemyError as error:
            raise unavailable(error) from error
        self._opened = True

    # ── buckets ───────────────────────────────────────────────────────────
    def update_bucket(self, name: str, client: str, change: Change) -> int:
        key = {"b_name": name, "b_client": client}
        with self.transaction() as connection:
            while True:
                found = connection.execute(self._statements.bucket, key).first()
                row, wait = change((found[0], found[1]) if found else None)
                values = {**key, "b_tokens": row[0], "b_at": row[1]}
                if found is not None:
                    connection.execute(self._statements.set_bucket, values)
                    return wait
                if connection.execute(self._statements.make_bucket, values).first() is not None:
                    return wait
                # Another process made the bucket meanwhile: apply the change to its row.

    def forget_buckets(self, name: str, before: float) -> None:
        from sqlalchemy import delete

        from dataclean_env.server.limits.limit_tables import buckets

        with self.transaction() as connection:
            connection.execute(
                delete(buckets).where((buckets.c.name == name) & (buckets.c.at < before))
            )

    # ── counts ────────────────────────────────────────────────────────────
    @contextmanager
    def settle(self, kind: str, client: str | None) -> Iterator[Settlement]:
        statements = self._statements
        with self.transaction() as connection:
            connection.execute(statements.lock, {"c_kind": kind})

            def held(key: str) -> int:
                others = {"c_kind": kind, "c_slot": self.slot, "c_client": key}
                return int(connection.execute(statements.held, others).scalar_one())

            found = Settlement(held(TOTAL), held(client) if client is not None else 0)
            yield found
            for key, count in found.rows.items():
                row = {"c_generation": self.generation, "c_kind": kind, "c_client": key}
                if count <= 0:
                    connection.execute(statements.drop_count, row)
                else:
                    connection.execute(
                        statements.set_count, {**row, "c_slot": self.slot, "c_n": count}
                    )

    def close(self) -> None:
        self.engine.dispose()
        if self._writer is not None:
            self._writer.close()


class SharedBuckets(Buckets):
    """Buckets in the shared limit store (`limit_store`): each update is one transaction
    holding the bucket's row, so two processes never spend the same token."""

    shared = True

    def __init__(self, database: LimitDatabase) -> None:
        super().__init__()
        self.database = database
        self._updates = 0

    def update(self, name: str, client: str, change: Change) -> int:
        wait = self.database.update_bucket(name, client, change)
        self._updates += 1
        return wait

    def forget(self, before: Callable[[str], float]) -> None:
        if self._updates % 1024:
            return
        for name in ("creations", "runs", "submissions"):
            self.database.forget_buckets(name, before(name))


class SharedCounts(Counts):
    """Counts in the shared database: the others' sums are read, this process's published."""

    shared = True

    def __init__(self, database: LimitDatabase) -> None:
        super().__init__()
        self.database = database

    @contextmanager
    def settle(self, kind: str, client: str | None = None) -> Iterator[Settlement]:
        # This process's own settlements queue here, not on the database's lock.
        with self._locks[kind], self.database.settle(kind, client) as found:
            yield found


class _Writer:
    """One writer at a time on a SQLite file that processes share: this process's threads
    take turns, then the process takes an flock on a file beside the database. SQLite's
    own wait for its lock sleeps 1, 2, 5, 10... ms between tries, so two processes' resets
    contending for it waited tens to hundreds of ms; the flock is tried every
    `WRITER_POLL_S`. A writer that has not had its turn after WRITER_WAIT_S finds the
    store unavailable (503), as when SQLite gives up."""

    def __init__(self, database: str) -> None:
        self._turn = threading.Lock()
        self._path = database + ".lock"
        self._fd: int | None = None  # opened on first use, as the database is

    @contextmanager
    def __call__(self) -> Iterator[None]:
        deadline = time.monotonic() + WRITER_WAIT_S
        if not self._turn.acquire(timeout=WRITER_WAIT_S):
            raise _busy()
        try:
            if self._fd is None:
                try:
                    self._fd = os.open(self._path, os.O_CREAT | os.O_RDWR, 0o600)
                except OSError as error:
                    raise unavailable(error) from error
            while not self._flocked(self._fd):
                if time.monotonic() > deadline:
                    raise _busy()
                time.sleep(WRITER_POLL_S)
            try:
                yield
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._turn.release()

    @staticmethod
    def _flocked(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _engine(url: str) -> Engine:
    from sqlalchemy import create_engine, event

    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False}
        )

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # BEGIN is issued below, IMMEDIATE
            dbapi_connection.execute("PRAGMA journal_mode=WAL")
            dbapi_connection.execute("PRAGMA synchronous=NORMAL")  # counts, not records

        @event.listens_for(engine, "begin")
        def _begin(connection: Any) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")  # writers queue, none upgrades

        return engine
    return create_engine(
        url, pool_pre_ping=True, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}
    )


@dataclass
class Limits:
    """What one process counts its limits in: the rate limits' buckets and the caps'
    counts, in memory or both in the shared database."""

    buckets: Buckets
    counts: Counts
    database: LimitDatabase | None = None

    def close(self) -> None:
        if self.database is not None:
            self.database.close()


def limits_for(settings: Settings) -> Limits:
    """The limits of DCE_LIMITS_DB (empty: this process's memory), in this process's slot."""
    if not settings.limits_db.strip():
        return Limits(Buckets(), Counts())
    database = LimitDatabase(settings.limits_db, settings.process_index)
    try:
        database.open()  # at start: this slot's predecessor's counts are released now
    except LimitsUnavailable as error:
        log.error("%s", error.detail)
    return Limits(SharedBuckets(database), SharedCounts(database), database)
