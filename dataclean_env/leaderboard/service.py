"""The leaderboard service: runs, their blind episodes, records, self-reported submissions.

One instance per app (`app.state.leaderboard`). The database is opened on first use (and by
`open()` at server start): migrations run, the secret is loaded, runs lost by an earlier
process are closed. Everything a client is told was stored has been committed first.

Lifecycle of a run: `create_run` picks fresh secret instances (a random 62-bit index per
episode, so no two runs share an instance and a final score can never be used as an oracle
for a later run), commits the run and its episodes, then issues the episodes to the store.
Each episode's end (finished, or timed out) commits its record in the step that ends it;
the last one marks the run complete, which puts it on the board of the current grader
version. `sweep` times out episodes past their deadline, retries a record whose write
failed, and aborts episodes that no live process holds (a crash) once their deadline
has passed; an aborted run never enters the board.

Several processes (`server --workers N`, replicas) may share one database, each holding its
own runs' episodes in memory. Each process registers as a holder (`holders`, with a
heartbeat every `HEARTBEAT_S`) and stamps its episodes with its id, and aborts only the
late episodes it owns but no longer holds, or those whose holder is gone: stopped (its row
removed by `close`) or silent for `HOLDER_GONE` (killed).
"""

from __future__ import annotations

import logging
import os
import secrets as random_source
import socket
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from dataclean_env.errors import (
    ClientQuotaReached,
    InvalidSubmission,
    LeaderboardUnavailable,
    StoreFull,
    UnknownRun,
)
from dataclean_env.generation import instance_hash, secret_seed
from dataclean_env.leaderboard import board
from dataclean_env.leaderboard.ranked import RankedEpisode
from dataclean_env.leaderboard.versions import (
    GENERATOR_VERSION,
    GRADER_VERSION,
    SERVER_VERSION,
)
from dataclean_env.server.rate_limit import RateLimit, buckets_for
from dataclean_env.settings import Settings
from dataclean_env.tasks.generated import FAMILIES, secret_task

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from dataclean_env.server.episode_store import EpisodeStore

log = logging.getLogger(__name__)

ABORT_GRACE = timedelta(seconds=60)  # past a deadline, before an unheld episode is aborted
HEARTBEAT_S = 30.0  # a serving process says it is alive this often (app lifespan)
HOLDER_GONE = timedelta(seconds=5 * HEARTBEAT_S)  # silent this long: the process is gone
BOARD_LIMIT = 500  # entries per board in one answer
RETAIN_S = 600.0  # a complete run's episodes stay readable (/state, a 409 on /step) this long
RETAIN_RUNS = 64  # and at most this many complete runs are kept so


@dataclass(frozen=True)
class Slot:
    """What an episode of a run is, besides its table."""

    run_id: str
    name: str
    model: str
    family: str
    difficulty: str
    instance_hash: str


class Leaderboard:
    def __init__(self, settings: Settings, store: EpisodeStore):
        self.settings = settings
        self.store = store
        buckets = buckets_for(settings.limits_db)  # shared by the server's processes
        self.run_limit = RateLimit.per_hour("runs", settings.leaderboard_runs_per_hour, buckets)
        self.submit_limit = RateLimit.per_hour(
            "submissions", settings.leaderboard_submissions_per_hour, buckets
        )
        self._engine: Engine | None = None
        self.holder_id = random_source.token_hex(8)  # this process, in the holders table
        self._secret: bytes | None = None
        self._open_lock = threading.Lock()
        self._live: dict[str, RankedEpisode] = {}  # episode id -> episode, until its run ends
        self._slots: dict[str, Slot] = {}
        self._runs: dict[str, list[str]] = {}  # open run id -> its episode ids
        self._run_clients: dict[str, str] = {}  # open run id -> the client that started it
        self._retired: dict[str, tuple[float, list[str]]] = {}  # complete: since when, ids
        self._live_lock = threading.Lock()

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

    def heartbeat(self) -> None:
        """Say this process is alive and sweep (the app's lifespan calls it every
        HEARTBEAT_S); nothing before the database is first opened."""
        if self._engine is None:
            return
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
        self.sweep()

    # ── runs ──────────────────────────────────────────────────────────────
    def create_run(
        self, name: str, model: str, families: list[str] | None, episodes: int | None, client: str
    ) -> dict[str, Any]:
        chosen = _families(families)
        count = self.settings.leaderboard_default_episodes if episodes is None else episodes
        if not 1 <= count <= self.settings.leaderboard_max_episodes:
            raise InvalidSubmission(
                f"episodes must be between 1 and {self.settings.leaderboard_max_episodes}"
            )
        engine = self.open()
        run_id = "run-" + random_source.token_hex(8)
        self._hold_slot(run_id, client)
        try:
            self.run_limit.take(client)
            made = self._store_run(engine, run_id, name, model, chosen, count, client)
        except BaseException:
            with self._live_lock:
                self._release_slot(run_id)
            raise
        with self._live_lock:
            self._runs[run_id] = [episode.episode_id for episode, _, _ in made]
            for episode, slot, _ in made:
                self._live[episode.episode_id] = episode
                self._slots[episode.episode_id] = slot
                self.store.issue(episode)
        return {
            "run_id": run_id,
            "name": name,
            "model": model,
            "grader_version": GRADER_VERSION,
            "deadline_seconds": self.settings.leaderboard_episode_seconds,
            "episodes": [
                {"episode_id": e.episode_id, "task_id": s.family, "difficulty": s.difficulty}
                for e, s, _ in made
            ],
        }

    def _hold_slot(self, run_id: str, client: str) -> None:
        """Count `run_id` as open for `client`, or refuse: first the client's share (so one
        client cannot fill the server), then the server's cap."""
        # Not divided among processes: runs are made by POST /leaderboard/runs, which names
        # no episode, so the balancer sends every one to process 0.
        share = self.settings.leaderboard_open_runs_per_client
        cap = self.settings.leaderboard_open_runs
        with self._live_lock:
            if sum(holder == client for holder in self._run_clients.values()) >= share:
                raise ClientQuotaReached(
                    f"at most {share} open leaderboard runs per client; finish one, or retry "
                    f"in {ClientQuotaReached.retry_after} s"
                )
            if len(self._runs) >= cap:
                raise StoreFull(
                    f"{len(self._runs)} leaderboard runs are in progress, the most this server "
                    f"holds at once; retry in {StoreFull.retry_after} s"
                )
            self._runs[run_id] = []
            self._run_clients[run_id] = client

    def _release_slot(self, run_id: str) -> list[str]:
        # Callers hold _live_lock.
        self._run_clients.pop(run_id, None)
        return self._runs.pop(run_id, [])

    def _store_run(
        self,
        engine: Engine,
        run_id: str,
        name: str,
        model: str,
        chosen: list[str],
        count: int,
        client: str,
    ) -> list[tuple[RankedEpisode, Slot, dict[str, Any]]]:
        """Draw the run's instances and commit the run and its episodes."""
        from sqlalchemy import insert

        from dataclean_env.leaderboard.tables import run_episodes, runs

        now = datetime.now(UTC)
        seconds = self.settings.leaderboard_episode_seconds
        deadline = time.monotonic() + seconds
        made: list[tuple[RankedEpisode, Slot, dict[str, Any]]] = []
        for position in range(count):
            family = chosen[position % len(chosen)]
            index = random_source.randbits(62)
            task = secret_task(family, self.secret, index)
            slot = Slot(
                run_id,
                name,
                model,
                family,
                task.spec.difficulty,
                instance_hash(secret_seed(self.secret, family, index)),
            )
            # Drawn until its home is this process, where it is issued (server/affinity).
            episode_id = self.store.place.mint(lambda: "lb-" + random_source.token_hex(16))
            episode = RankedEpisode(episode_id, task, deadline, self._on_end)
            row = {
                "episode_id": episode_id,
                "run_id": run_id,
                "position": position,
                "family": family,
                "instance_index": index,
                "instance_hash": slot.instance_hash,
                "difficulty": slot.difficulty,
                "status": "open",
                "created_at": now,
                "deadline": now + timedelta(seconds=seconds),
                "holder_id": self.holder_id,
            }
            made.append((episode, slot, row))
        with engine.begin() as connection:
            connection.execute(
                insert(runs).values(
                    run_id=run_id,
                    name=name,
                    model=model,
                    client=client[:64],
                    status="open",
                    episodes=count,
                    families=chosen,
                    server_version=SERVER_VERSION,
                    generator_version=GENERATOR_VERSION,
                    created_at=now,
                )
            )
            connection.execute(insert(run_episodes), [row for _, _, row in made])
        return made

    def run(self, run_id: str) -> dict[str, Any]:
        """A run's status and the scores of its ended episodes (never its episode ids: the
        run id is public, the episode ids are what lets one play)."""
        from sqlalchemy import select

        from dataclean_env.leaderboard.tables import records, run_episodes, runs

        self.sweep()
        with self.open().connect() as connection:
            row = connection.execute(select(runs).where(runs.c.run_id == run_id)).one_or_none()
            if row is None:
                raise UnknownRun(f"no leaderboard run {run_id!r}")
            episodes = connection.execute(
                select(run_episodes.c.position, run_episodes.c.family, run_episodes.c.status)
                .where(run_episodes.c.run_id == run_id)
                .order_by(run_episodes.c.position)
            ).all()
            scored = dict(
                connection.execute(
                    select(run_episodes.c.position, records.c.score)
                    .join(records, records.c.episode_id == run_episodes.c.episode_id)
                    .where(records.c.run_id == run_id, records.c.grader_version == GRADER_VERSION)
                ).all()
            )
        scores = list(scored.values())
        return {
            "run_id": row.run_id,
            "name": row.name,
            "model": row.model,
            "status": row.status,
            "grader_version": GRADER_VERSION,
            "created_at": _utc(row.created_at).isoformat(),
            "mean": round(sum(scores) / len(scores), 4) if row.status == "complete" else None,
            "episodes": [
                {
                    "position": e.position,
                    "task_id": e.family,
                    "status": e.status,
                    "score": scored.get(e.position),
                }
                for e in episodes
            ],
        }

    # ── the end of an episode ─────────────────────────────────────────────
    def _on_end(self, episode: RankedEpisode) -> None:
        """Commit the episode's record (its caller holds the episode's lock)."""
        from sqlalchemy import func, insert, select, update

        from dataclean_env.leaderboard.tables import records, run_episodes, runs

        slot = self._slots[episode.episode_id]
        now = datetime.now(UTC)
        with self.open().begin() as connection:
            # Lock the run's row (PostgreSQL; SQLite's BEGIN IMMEDIATE already serialises), so
            # two episodes ending at once cannot both miss that the run is complete.
            connection.execute(
                select(runs.c.run_id).where(runs.c.run_id == slot.run_id).with_for_update()
            )
            claimed = connection.execute(
                update(run_episodes)
                .where(
                    run_episodes.c.episode_id == episode.episode_id,
                    run_episodes.c.status == "open",
                )
                .values(status=episode.status)
            ).rowcount
            if claimed:
                connection.execute(insert(records).values(**self._record(episode, slot, now)))
                left = connection.execute(
                    select(func.count())
                    .select_from(run_episodes)
                    .where(run_episodes.c.run_id == slot.run_id, run_episodes.c.status == "open")
                ).scalar_one()
                if left == 0:
                    connection.execute(
                        update(runs)
                        .where(runs.c.run_id == slot.run_id, runs.c.status == "open")
                        .values(status="complete", completed_at=now)
                    )
            else:  # the database closed it meanwhile (aborted): nothing more to record
                log.warning("episode %s was closed before its record", episode.episode_id)
        episode.recorded = True
        self._release_if_done(slot.run_id)

    def _record(self, episode: RankedEpisode, slot: Slot, now: datetime) -> dict[str, Any]:
        return {
            "episode_id": episode.episode_id,
            "run_id": slot.run_id,
            "name": slot.name,
            "model": slot.model,
            "family": slot.family,
            "difficulty": slot.difficulty,
            "instance_hash": slot.instance_hash,
            "status": episode.status,
            "score": episode.reward.total,
            "components": episode.reward.model_dump(),
            "trace": episode.trace,
            "steps": episode.step_count,
            "refused": episode.refusals,
            "started_at": episode.started_at,
            "ended_at": episode.ended_at or now,
            "recorded_at": now,
            "server_version": SERVER_VERSION,
            "grader_version": GRADER_VERSION,
            "generator_version": GENERATOR_VERSION,
        }

    def _release_if_done(self, run_id: str) -> None:
        """Once every episode of a run is recorded, the run retires: its episodes stay
        readable for `RETAIN_S`, then the server lets go of their tables."""
        with self._live_lock:
            ids = self._runs.get(run_id, [])
            if not all(self._live[i].recorded for i in ids if i in self._live):
                return
            self._retired[run_id] = (time.monotonic(), self._release_slot(run_id))
            self._drop_retired()

    def _drop_retired(self) -> None:
        # Callers hold _live_lock. Oldest first (dicts keep insertion order).
        cutoff = time.monotonic() - RETAIN_S
        for run_id, (since, ids) in list(self._retired.items()):
            if since >= cutoff and len(self._retired) <= RETAIN_RUNS:
                break
            del self._retired[run_id]
            for episode_id in ids:
                self._live.pop(episode_id, None)
                self._slots.pop(episode_id, None)
                self.store.withdraw(episode_id)

    # ── sweeping ──────────────────────────────────────────────────────────
    def sweep(self) -> None:
        """Time out late episodes, retry failed records, abort what no process holds."""
        engine = self.open()
        with self._live_lock:
            self._drop_retired()
            live = list(self._live.values())
        for episode in live:
            with episode.lock:
                try:
                    if not episode.expire_if_late() and episode.done and not episode.recorded:
                        self._on_end(episode)
                except Exception:  # the database may be down: the next sweep retries
                    log.exception("could not record leaderboard episode %s", episode.episode_id)
        self._abort_unheld(engine)

    def _abort_unheld(self, engine: Engine) -> None:
        """Abort late open episodes that no live process holds: this process's own that it
        no longer holds, and those of holders that are gone (or were never recorded)."""
        from sqlalchemy import select

        from dataclean_env.leaderboard.tables import holders, run_episodes, runs

        now = datetime.now(UTC)
        cutoff = now - ABORT_GRACE
        with self._live_lock:
            held = set(self._live)
        with engine.begin() as connection:
            late = connection.execute(
                select(
                    run_episodes.c.episode_id,
                    run_episodes.c.run_id,
                    run_episodes.c.holder_id,
                    holders.c.seen_at,
                )
                .select_from(run_episodes)
                .outerjoin(holders, holders.c.holder_id == run_episodes.c.holder_id)
                .where(run_episodes.c.status == "open", run_episodes.c.deadline < cutoff)
            ).all()
            lost = [
                row
                for row in late
                if row.episode_id not in held
                and (
                    row.holder_id == self.holder_id
                    or row.seen_at is None  # stopped, or made before holders were recorded
                    or _utc(row.seen_at) < now - HOLDER_GONE
                )
            ]
            if lost:
                _abort(connection, lost, run_episodes, runs)

    # ── self-reported scores ──────────────────────────────────────────────
    def submit(
        self, model_name: str, task_id: str, score: float, steps: int, client: str
    ) -> dict[str, Any]:
        from sqlalchemy import insert

        from dataclean_env.leaderboard.tables import submissions

        engine = self.open()
        self.submit_limit.take(client)
        now = datetime.now(UTC)
        entry = {"model_name": model_name, "task_id": task_id, "score": score, "steps": steps}
        with engine.begin() as connection:
            connection.execute(
                insert(submissions).values(**entry, client=client[:64], created_at=now)
            )
        return {**entry, "submitted_at": now.isoformat(), "verified": False}

    # ── the boards ────────────────────────────────────────────────────────
    def boards(self, grader_version: str | None = None) -> dict[str, Any]:
        from sqlalchemy import func, select

        from dataclean_env.leaderboard.tables import records, runs, submissions

        version = grader_version or GRADER_VERSION
        self.sweep()
        with self.open().connect() as connection:
            complete = [
                board.RunRow(r.run_id, r.name, r.model, r.episodes, r.created_at)
                for r in connection.execute(
                    select(
                        runs.c.run_id, runs.c.name, runs.c.model, runs.c.episodes, runs.c.created_at
                    ).where(runs.c.status == "complete")
                )
            ]
            scores: dict[str, list[tuple[str, float]]] = {}
            for row in connection.execute(
                select(records.c.run_id, records.c.family, records.c.score).where(
                    records.c.grader_version == version
                )
            ):
                scores.setdefault(row.run_id, []).append((row.family, row.score))
            best = connection.execute(
                select(
                    submissions.c.model_name, submissions.c.task_id, func.max(submissions.c.score)
                ).group_by(submissions.c.model_name, submissions.c.task_id)
            ).all()
            total = connection.execute(select(func.count()).select_from(submissions)).scalar_one()
        return {
            "leaderboard": board.self_reported(best, BOARD_LIMIT),
            "total_submissions": total,
            "verified": {
                "grader_version": version,
                "entries": board.verified(complete, scores, BOARD_LIMIT),
            },
        }


def _utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored one is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _families(families: list[str] | None) -> list[str]:
    if families is None:
        return list(FAMILIES)
    unknown = [f for f in families if f not in FAMILIES]
    if unknown or not families:
        raise InvalidSubmission(
            f"families must be a non-empty list of generated families ({', '.join(FAMILIES)})"
            + (f"; unknown: {', '.join(map(str, unknown[:5]))}" if unknown else "")
        )
    return list(dict.fromkeys(families))


def _abort(connection: Connection, lost: list[Any], run_episodes: Any, runs: Any) -> None:
    from sqlalchemy import update

    ids = [row.episode_id for row in lost]
    connection.execute(
        update(run_episodes)
        .where(run_episodes.c.episode_id.in_(ids), run_episodes.c.status == "open")
        .values(status="aborted")
    )
    connection.execute(
        update(runs)
        .where(runs.c.run_id.in_({row.run_id for row in lost}), runs.c.status == "open")
        .values(status="aborted", completed_at=datetime.now(UTC))
    )
    log.warning("aborted %d leaderboard episodes that no server holds", len(ids))
