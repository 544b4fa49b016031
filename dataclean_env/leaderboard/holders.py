"""The leaderboard's database and the processes that share it (holders).

Several processes (`server --workers N`, replicas) may share one database, each holding its
own runs' episodes in memory. Each process registers as a holder (`holders`, with a
heartbeat every `HEARTBEAT_S`) and stamps its episodes with its id. A run whose holder is
gone is aborted at once (`_abort_unheld`, at start-up and on every sweep): gone means its
row was removed (`close`, a clean stop), or it has been silent for `HOLDER_GONE` (killed
on another host), or it names this host and a process that is not running, or this very
pid registered before this process started (a restart: in a container the new process
often gets the old pid). Its own runs a process no longer holds are aborted past their
deadline.
"""

from __future__ import annotations

import logging
import os
import secrets as random_source
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from dataclean_env.errors import (
    LeaderboardUnavailable,
)
from dataclean_env.leaderboard import tokens
from dataclean_env.leaderboard.episodes import EpisodeHolder
from dataclean_env.leaderboard.ranked import RankedEpisode
from dataclean_env.rate_limit import Buckets, RateLimit
from dataclean_env.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from dataclean_env.leaderboard.runs import Slot


log = logging.getLogger(__name__)

ABORT_GRACE = timedelta(seconds=60)  # past a deadline, before an unheld episode is aborted
HEARTBEAT_S = 30.0  # a serving process says it is alive this often (app lifespan)
HOLDER_GONE = timedelta(seconds=5 * HEARTBEAT_S)  # silent this long: the process is gone
# Holders registered before this moment on this host, under this pid, were an earlier
# process (a restarted container's server often gets the same pid).
PROCESS_STARTED = datetime.now(UTC)


class Holders:
    """The database (opened once, on first use), this process's registration as a holder,
    and the in-memory state of the runs this process holds (shared by `Runs` and `Reads`)."""

    def __init__(self, settings: Settings, store: EpisodeHolder, buckets: Buckets | None = None):
        self.settings = settings
        self.store = store
        buckets = buckets or Buckets()  # the app's: shared by its processes (limit_store)
        self.run_limit = RateLimit.per_hour("runs", settings.leaderboard_runs_per_hour, buckets)
        self.submit_limit = RateLimit.per_hour(
            "submissions", settings.leaderboard_submissions_per_hour, buckets
        )
        self._engine: Engine | None = None
        # Runs' and episodes' deadlines read this (tests move it rather than wait).
        self.clock: Callable[[], float] = time.monotonic
        self.holder_id = random_source.token_hex(8)  # this process, in the holders table
        self._secret: bytes | None = None
        self._open_lock = threading.Lock()
        self._live: dict[str, RankedEpisode] = {}  # episode id -> joined episode
        self._slots: dict[str, Slot] = {}  # episode id -> what it is, until its run retires
        self._runs: dict[str, list[str]] = {}  # open run id -> its episode ids
        self._run_holders: dict[str, str] = {}  # open run id -> the submitter holding it
        self._retired: dict[str, tuple[float, list[str]]] = {}  # closed: since when, ids
        self._live_lock = threading.Lock()

    def token_id(self, token: str) -> str:
        """The id of a valid submitter token (InvalidToken), for the quotas it raises."""
        return tokens.token_id(self.open(), token)

    # ── database ──────────────────────────────────────────────────────────
    def open(self) -> Engine:
        """The engine, after migrations and start-up checks (once per process)."""
        if self._engine is not None:
            return self._engine
        with self._open_lock:
            if self._engine is None:
                from dataclean_env.leaderboard import db
                from dataclean_env.leaderboard.secret import load_secret

                url = db.database_url(self.settings.database_url, self.settings.leaderboard_db)
                try:
                    engine = db.connect(url)
                    db.migrate(engine)
                    given = self.settings.leaderboard_secret
                    self._secret = load_secret(engine, given.get_secret_value() if given else None)
                    self._register(engine)
                    self._abort_unheld(engine)
                except Exception as exc:  # the rest of the server keeps working; retried later
                    log.exception("cannot open the leaderboard database")
                    raise LeaderboardUnavailable(
                        f"the leaderboard database cannot be opened: {type(exc).__name__}"
                    ) from exc
                self._engine = engine
        return self._engine

    @property
    def secret(self) -> bytes:
        self.open()
        assert self._secret is not None
        return self._secret

    def close(self) -> None:
        """Stop holding: the other processes may then abort this one's unfinished runs."""
        if self._engine is None:
            return
        from sqlalchemy import delete

        from dataclean_env.leaderboard.tables import holders

        try:
            with self._engine.begin() as connection:
                connection.execute(delete(holders).where(holders.c.holder_id == self.holder_id))
        except Exception:  # the database may be down: the heartbeat then ages out
            log.exception("could not unregister leaderboard holder %s", self.holder_id)
        self._engine.dispose()
        self._engine = None

    def _register(self, engine: Engine) -> None:
        from sqlalchemy import delete, insert

        from dataclean_env.leaderboard.tables import holders

        now = datetime.now(UTC)
        with engine.begin() as connection:
            # Forget processes silent for a day (their episodes are long aborted), and this
            # one's own row from an open that failed half way: registering is retried.
            connection.execute(delete(holders).where(holders.c.seen_at < now - timedelta(days=1)))
            connection.execute(delete(holders).where(holders.c.holder_id == self.holder_id))
            connection.execute(
                insert(holders).values(
                    holder_id=self.holder_id,
                    host=socket.gethostname()[:255],
                    pid=os.getpid(),
                    started_at=now,
                    seen_at=now,
                )
            )

    def beat(self) -> bool:
        """Say this process is alive; False (nothing said) before the database is first
        opened."""
        if self._engine is None:
            return False
        from sqlalchemy import update

        from dataclean_env.leaderboard.tables import holders

        with self._engine.begin() as connection:
            seen = connection.execute(
                update(holders)
                .where(holders.c.holder_id == self.holder_id)
                .values(seen_at=datetime.now(UTC))
            )
        if seen.rowcount == 0:  # the row is gone: say again that this process holds its runs
            self._register(self._engine)
        return True

    def _abort_unheld(self, engine: Engine) -> None:
        """Abort the open runs no live process holds: those of holders that are gone (see
        the module's docstring), and this process's own late runs it no longer holds."""
        from sqlalchemy import func, select

        from dataclean_env.leaderboard.tables import holders, run_episodes, runs

        now = datetime.now(UTC)
        with self._live_lock:
            held = set(self._runs)
        with engine.begin() as connection:
            # One row per open run and holder (a run's episodes share both): a sweep reads
            # as many rows as there are open runs, not open episodes.
            open_runs = connection.execute(
                select(
                    run_episodes.c.run_id,
                    run_episodes.c.holder_id,
                    func.min(run_episodes.c.deadline).label("deadline"),
                    holders.c.seen_at,
                    holders.c.host,
                    holders.c.pid,
                    holders.c.started_at,
                )
                .select_from(run_episodes)
                .outerjoin(holders, holders.c.holder_id == run_episodes.c.holder_id)
                .where(run_episodes.c.status == "open")
                .group_by(
                    run_episodes.c.run_id,
                    run_episodes.c.holder_id,
                    holders.c.seen_at,
                    holders.c.host,
                    holders.c.pid,
                    holders.c.started_at,
                )
            ).all()
            lost = {
                row.run_id
                for row in open_runs
                if (
                    row.run_id not in held and as_utc(row.deadline) < now - ABORT_GRACE
                    if row.holder_id == self.holder_id
                    else self._holder_gone(row, now)
                )
            }
            if lost:
                _abort(connection, lost, run_episodes, runs)

    @staticmethod
    def _holder_gone(row: Any, now: datetime) -> bool:
        if row.seen_at is None or as_utc(row.seen_at) < now - HOLDER_GONE:
            return True  # stopped (or made before holders were recorded), or silent
        if row.host != socket.gethostname()[:255]:
            return False
        if row.pid == os.getpid():  # this process, or an earlier one that had its pid
            return as_utc(row.started_at) < PROCESS_STARTED
        return not _running(row.pid)


def as_utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored one is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _running(pid: int) -> bool:
    """Whether a process `pid` runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        return True
    return True


def _abort(connection: Connection, run_ids: set[str], run_episodes: Any, runs: Any) -> None:
    from sqlalchemy import update

    connection.execute(
        update(run_episodes)
        .where(run_episodes.c.run_id.in_(run_ids), run_episodes.c.status == "open")
        .values(status="aborted")
    )
    connection.execute(
        update(runs)
        .where(runs.c.run_id.in_(run_ids), runs.c.status == "open")
        .values(status="aborted", completed_at=datetime.now(UTC))
    )
    log.warning("aborted %d leaderboard runs that no server holds", len(run_ids))
