"""The leaderboard's runs: creating them, their episodes' lifecycle (joined, ended,
recorded), the sweep that times out late ones, and self-reported submissions. Every write
of the leaderboard but the holders' own is here.

Lifecycle of a run: `create_run` draws the run's instances afresh from the secret split
(its suite's composition, `benchmark.suite`; or, for a practice run, `episodes` spread over
`families`), so no two runs share an instance and a final score can never be used as an
oracle for a later run. It commits the run and its episodes, then issues their ids to the
store; an episode's table is made when it is first joined (a suite run has hundreds), and
its clock (`leaderboard_episode_seconds`) starts then, bounded by the run's own deadline
(`leaderboard_run_seconds`). Each episode's end (finished, or timed out) commits its record,
with its normalised score (`benchmark.normalised`), in the step that ends it; the last one
closes the run: `complete` if every episode was finished, else `timed_out`. Only a complete
suite run counts on its suite version's board. `sweep` times out late episodes and runs,
retries a record whose write failed, and aborts runs that no live process holds; it runs
with each process's heartbeat (`Leaderboard.heartbeat`), never inside a read.
"""

from __future__ import annotations

import logging
import secrets as random_source
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from dataclean_env.benchmark.normalised import anchors
from dataclean_env.benchmark.suite import (
    INDEX_BITS,
    Cell,
    Suite,
    secret_difficulty,
    secret_instance,
    suites,
)
from dataclean_env.benchmark.versions import (
    GENERATOR_VERSION,
    GRADER_VERSION,
    SERVER_VERSION,
    suite_version,
)
from dataclean_env.engine.episode_ids import LEADERBOARD_PREFIX
from dataclean_env.errors import (
    ClientQuotaReached,
    InvalidSubmission,
    StoreFull,
)
from dataclean_env.generation import instance_hash, secret_seed
from dataclean_env.leaderboard import board
from dataclean_env.leaderboard.holders import Holders
from dataclean_env.leaderboard.ranked import RankedEpisode
from dataclean_env.leaderboard.tokens import Submitter
from dataclean_env.leaderboard.withdraw import WITHDRAWN
from dataclean_env.tasks.generated import FAMILIES

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from dataclean_env.engine.episode import Episode


log = logging.getLogger(__name__)

RETAIN_S = 600.0  # a closed run's episodes stay readable (/state, a 409 on /step) this long
RETAIN_RUNS = 64  # and at most this many closed runs are kept so
DEFAULT_SUITE = "full"
MAX_ROLLOUTS = 8  # plays of one drawn instance in a run
ANONYMOUS = "address:"  # an anonymous run's holder: its client's address after this
EXPIRED = "expired"  # a run no episode of which was joined in time (never counted)


@dataclass(frozen=True)
class Slot:
    """What an episode of a run is, besides its table (made when first joined)."""

    run_id: str
    name: str
    model: str
    family: str
    difficulty: str
    instance_index: int
    instance_hash: str
    suite: str | None  # the suite's composition version; None: a practice run
    run_deadline: float  # on the leaderboard's clock
    join_deadline: float  # the run expires if none of its episodes is joined by then


class Runs(Holders):
    # ── runs ──────────────────────────────────────────────────────────────
    def create_run(
        self,
        name: str,
        model: str,
        client: str,
        suite: str | None = None,
        families: list[str] | None = None,
        episodes: int | None = None,
        submitter: Submitter | None = None,
        declared: dict[str, Any] | None = None,
        rollouts: int = 1,
    ) -> dict[str, Any]:
        """A run of `suite` (default: the full suite), or with `families`/`episodes` a
        practice run (never ranked). `submitter`: the token's holder; None: anonymous.
        `rollouts`: each drawn instance is played that many times, as separate episodes in
        a row (the run is complete when every one is finished)."""
        engine = self.open()
        played = self._composition(suite, families, episodes)
        run_id = "run-" + random_source.token_hex(8)
        # A token's runs count against the token; anonymous ones against the address.
        holder = submitter.token_id if submitter else f"{ANONYMOUS}{client}"
        self._hold_slot(run_id, holder)
        try:
            self.run_limit.take(client)
            drawn = played.draw(self.secret) if isinstance(played, Suite) else played
            drawn = [instance for instance in drawn for _ in range(rollouts)]
            slots = self._store_run(
                engine, run_id, name, model, played, drawn, client, submitter, declared, rollouts
            )
        except BaseException:
            with self._live_lock:
                self._release_slot(run_id)
            raise
        with self._live_lock:
            self._runs[run_id] = list(slots)
            self._slots.update(slots)
        for episode_id in slots:
            self.store.issue(episode_id, partial(self._build, episode_id), self._joined)
        composition = played.version if isinstance(played, Suite) else None
        return {
            "run_id": run_id,
            "name": name,
            "model": model,
            "anonymous": submitter is None,
            "suite": played.name if isinstance(played, Suite) else None,
            "suite_version": suite_version(composition) if composition else None,
            "grader_version": GRADER_VERSION,
            "deadline_seconds": self.settings.leaderboard_episode_seconds,
            "run_deadline_seconds": self.settings.leaderboard_run_seconds,
            "rollouts": rollouts,
            "episodes": [
                {"episode_id": episode_id, "task_id": s.family, "difficulty": s.difficulty}
                for episode_id, s in slots.items()
            ],
        }

    def _composition(
        self, suite: str | None, families: list[str] | None, episodes: int | None
    ) -> Suite | list[tuple[Cell, int]]:
        """The suite a run plays, or a practice run's drawn instances."""
        if families is None and episodes is None:
            name = suite or DEFAULT_SUITE
            found = suites().get(name) or next(
                (s for s in suites().values() if s.version == name), None
            )
            if found is None:
                names = ", ".join(f"{s.name} ({s.version})" for s in suites().values())
                raise InvalidSubmission(f"suite: no suite {name[:64]!r}; the suites: {names}")
            return found
        if suite is not None:
            raise InvalidSubmission("suite: a suite run plays its suite; omit families/episodes")
        chosen = _families(families)
        count = self.settings.leaderboard_default_episodes if episodes is None else episodes
        if not 1 <= count <= self.settings.leaderboard_max_episodes:
            raise InvalidSubmission(
                f"episodes must be between 1 and {self.settings.leaderboard_max_episodes}"
            )
        drawn = []
        for position in range(count):
            family = chosen[position % len(chosen)]
            index = random_source.randbits(INDEX_BITS)
            drawn.append((Cell(family, secret_difficulty(family, self.secret, index)), index))
        return drawn

    def _hold_slot(self, run_id: str, holder: str) -> None:
        """Count `run_id` as open for `holder`, or refuse: first the holder's share (so one
        submitter cannot fill the server), then its pool's cap: anonymous runs (holders
        `address:...`) have a pool of their own, so they cannot fill the token holders'."""
        # Not divided among processes: runs are made by POST /leaderboard/runs, which names
        # no episode, so the balancer sends every one to process 0.
        share = self.settings.leaderboard_open_runs_per_client
        anonymous = holder.startswith(ANONYMOUS)
        if anonymous:
            cap, pool = self.settings.leaderboard_open_anonymous_runs, "anonymous "
        else:
            cap, pool = self.settings.leaderboard_open_runs, ""
        with self._live_lock:
            if sum(h == holder for h in self._run_holders.values()) >= share:
                raise ClientQuotaReached(
                    f"at most {share} open leaderboard runs per client; finish one, or retry "
                    f"in {ClientQuotaReached.retry_after} s"
                )
            held = sum(h.startswith(ANONYMOUS) == anonymous for h in self._run_holders.values())
            if held >= cap:
                raise StoreFull(
                    f"{held} {pool}leaderboard runs are in progress, the most this server "
                    f"holds at once; retry in {StoreFull.retry_after} s"
                )
            self._runs[run_id] = []
            self._run_holders[run_id] = holder

    def _release_slot(self, run_id: str) -> list[str]:
        # Callers hold _live_lock.
        self._run_holders.pop(run_id, None)
        return self._runs.pop(run_id, [])

    def _store_run(
        self,
        engine: Engine,
        run_id: str,
        name: str,
        model: str,
        played: Suite | list[tuple[Cell, int]],
        drawn: list[tuple[Cell, int]],
        client: str,
        submitter: Submitter | None,
        declared: dict[str, Any] | None,
        rollouts: int,
    ) -> dict[str, Slot]:
        """Commit the run and its episodes; their slots, by episode id, in run order."""
        from sqlalchemy import insert

        from dataclean_env.leaderboard.tables import run_episodes, runs

        now = datetime.now(UTC)
        run_seconds = self.settings.leaderboard_run_seconds
        composition = played.version if isinstance(played, Suite) else None
        run_deadline = self.clock() + run_seconds
        join_deadline = self.clock() + self.settings.leaderboard_unplayed_run_seconds
        slots: dict[str, Slot] = {}
        rows = []
        for position, (cell, index) in enumerate(drawn):
            digest = instance_hash(secret_seed(self.secret, cell.family, index))
            # Drawn until its home is this process, where it is issued (server/affinity).
            episode_id = self.store.place.mint(
                lambda: LEADERBOARD_PREFIX + random_source.token_hex(16)
            )
            slots[episode_id] = Slot(
                run_id, name, model, cell.family, cell.difficulty, index, digest,
                composition, run_deadline, join_deadline,
            )  # fmt: skip
            rows.append(
                {
                    "episode_id": episode_id,
                    "run_id": run_id,
                    "position": position,
                    "family": cell.family,
                    "instance_index": index,
                    "instance_hash": digest,
                    "difficulty": cell.difficulty,
                    "status": "open",
                    "created_at": now,
                    "deadline": now + timedelta(seconds=run_seconds),
                    "holder_id": self.holder_id,
                }
            )
        with engine.begin() as connection:
            connection.execute(
                insert(runs).values(
                    run_id=run_id,
                    name=name,
                    model=model,
                    client=client[:64],
                    status="open",
                    episodes=len(rows),
                    families=list(dict.fromkeys(cell.family for cell, _ in drawn)),
                    server_version=SERVER_VERSION,
                    generator_version=GENERATOR_VERSION,
                    created_at=now,
                    suite=composition,
                    token_id=submitter.token_id if submitter else None,
                    declared=declared or {},
                    deadline=now + timedelta(seconds=run_seconds),
                    rollouts=rollouts,
                )
            )
            connection.execute(insert(run_episodes), rows)
        return slots

    def _build(self, episode_id: str) -> RankedEpisode | None:
        """The episode's table, made on a first join (the store calls it, outside its lock:
        it takes a moment; two first joins at once make it twice and the store keeps one).
        Nothing is kept here until the store has taken it (`_joined`): a join it refuses
        (no room) leaves the episode unjoined, its clock not started."""
        with self._live_lock:
            slot = self._slots.get(episode_id)
            if slot is None or slot.run_id not in self._runs:  # its run has ended
                return None
        task = secret_instance(slot.family, self.secret, slot.instance_index)
        started = self.clock() + self.settings.leaderboard_episode_seconds
        deadline = min(started, slot.run_deadline)
        return RankedEpisode(episode_id, task, deadline, self._on_end, self.clock)

    def _joined(self, episode: Episode) -> None:
        """The store took a built episode: sweeps time it out from now on."""
        assert isinstance(episode, RankedEpisode)
        with self._live_lock:
            if episode.episode_id in self._slots:  # not retired meanwhile
                self._live.setdefault(episode.episode_id, episode)

    # ── the end of an episode ─────────────────────────────────────────────
    def _on_end(self, episode: RankedEpisode) -> None:
        """Commit the episode's record (its caller holds the episode's lock). The episode
        has ended: first it gives back its place in the store and its joiner's quota."""
        from sqlalchemy import insert, select, update

        self.store.release(episode.episode_id)

        from dataclean_env.leaderboard.tables import records, run_episodes, runs

        slot = self._slots[episode.episode_id]
        now = datetime.now(UTC)
        record = self._record(episode, slot, now)  # outside the transaction: it grades
        closed = False
        with self.open().begin() as connection:
            # Lock the run's row (PostgreSQL; SQLite's BEGIN IMMEDIATE already serialises), so
            # two episodes ending at once cannot both miss that the run has ended.
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
                connection.execute(insert(records).values(**record))
                closed = _close_if_ended(connection, slot.run_id, now)
            else:  # the database closed it meanwhile (aborted): nothing more to record
                log.warning("episode %s was closed before its record", episode.episode_id)
        episode.recorded = True
        if closed:
            self._retire(slot.run_id)

    def _record(self, episode: RankedEpisode, slot: Slot, now: datetime) -> dict[str, Any]:
        marks = anchors(partial(secret_instance, slot.family, self.secret, slot.instance_index))
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
            "suite_version": suite_version(slot.suite) if slot.suite else None,
            "normalised": round(marks.normalise(episode.score), 6),
            "figures": board.figures(episode),
        }

    def _retire(self, run_id: str) -> None:
        """A closed run retires: its episodes' scores may be shown (they were sealed while it
        ran), they stay readable for `RETAIN_S`, then the server lets go of their tables."""
        with self._live_lock:
            if run_id in self._runs:
                ids = self._release_slot(run_id)
                self._retired[run_id] = (self.clock(), ids)
                for episode_id in ids:
                    if episode_id in self._live:
                        self._live[episode_id].sealed = False
            self._drop_retired()

    def _drop_retired(self) -> None:
        # Callers hold _live_lock. Oldest first (dicts keep insertion order).
        cutoff = self.clock() - RETAIN_S
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
        """Time out late episodes and runs, retry failed records, abort what no process
        holds."""
        engine = self.open()
        with self._live_lock:
            self._drop_retired()
            live = list(self._live.values())
            now = self.clock()
            late = [
                run_id
                for run_id, ids in self._runs.items()
                if ids and self._slots[ids[0]].run_deadline < now
            ]
            unplayed = [
                run_id
                for run_id, ids in self._runs.items()
                if ids
                and self._slots[ids[0]].join_deadline < now
                and all(self.store.unjoined(i) for i in ids)
            ]
        for episode in live:
            # An episode a step holds is passed over, not waited for (a step may take seconds,
            # and the sweep comes round again): that step records an end it makes, and the
            # next sweep times the episode out or retries its record.
            if not episode.lock.acquire(blocking=False):
                continue
            try:
                if not episode.expire_if_late() and episode.done and not episode.recorded:
                    self._on_end(episode)
            except Exception:  # the database may be down: the next sweep retries
                log.exception("could not record leaderboard episode %s", episode.episode_id)
            finally:
                episode.lock.release()
        for run_id in late:
            self._time_out_unjoined(engine, run_id)
        for run_id in unplayed:
            self._expire(engine, run_id)
        self._end_withdrawn(engine)
        self._abort_unheld(engine)

    def _end_withdrawn(self, engine: Engine) -> None:
        """End this process's episodes of runs an administrator withdrew (`withdraw`, run
        by another process: the admin command): they give back their places at once."""
        from sqlalchemy import select

        from dataclean_env.leaderboard.tables import runs

        with self._live_lock:
            held = list(self._runs)
        if not held:
            return
        with engine.connect() as connection:
            gone = connection.execute(
                select(runs.c.run_id).where(runs.c.run_id.in_(held), runs.c.status == WITHDRAWN)
            ).scalars()
            withdrawn = list(gone)
        for run_id in withdrawn:
            with self._live_lock:
                live = [self._live[i] for i in self._runs.get(run_id, []) if i in self._live]
            for episode in live:
                with episode.lock:
                    episode.withdraw()
                self.store.release(episode.episode_id)
            self._retire(run_id)

    def _time_out_unjoined(self, engine: Engine, run_id: str) -> None:
        """A run past its deadline: its episodes never joined end as timed out, unscored."""
        from sqlalchemy import update

        from dataclean_env.leaderboard.tables import run_episodes

        with self._live_lock:
            joined = [i for i in self._runs.get(run_id, []) if i in self._live]
        now = datetime.now(UTC)
        with engine.begin() as connection:
            connection.execute(
                update(run_episodes)
                .where(
                    run_episodes.c.run_id == run_id,
                    run_episodes.c.status == "open",
                    run_episodes.c.episode_id.not_in(joined),
                )
                .values(status="timed_out")
            )
            closed = _close_if_ended(connection, run_id, now)
        if closed:
            self._retire(run_id)

    def _expire(self, engine: Engine, run_id: str) -> None:
        """A run none of whose episodes was joined in time: it expires, and frees its place.
        No one learned anything from it, so it is not counted (nor listed)."""
        from sqlalchemy import update

        from dataclean_env.leaderboard.tables import run_episodes, runs

        with engine.begin() as connection:
            connection.execute(
                update(run_episodes)
                .where(run_episodes.c.run_id == run_id, run_episodes.c.status == "open")
                .values(status=EXPIRED)
            )
            expired = connection.execute(
                update(runs)
                .where(runs.c.run_id == run_id, runs.c.status == "open")
                .values(status=EXPIRED, completed_at=datetime.now(UTC))
            ).rowcount
        if expired:
            self._retire(run_id)

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


@cache
def max_steps(family: str, secret: bytes) -> int:
    # Every instance of a family has the same step budget: read it off instance 0.
    return secret_instance(family, secret, 0).spec.max_steps


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


def _close_if_ended(connection: Connection, run_id: str, now: datetime) -> bool:
    """Close the run once none of its episodes is open: complete if all were finished,
    else timed out. Whether it closed it."""
    from sqlalchemy import func, select, update

    from dataclean_env.leaderboard.tables import run_episodes, runs

    counts: dict[str, int] = dict(
        connection.execute(
            select(run_episodes.c.status, func.count())
            .where(run_episodes.c.run_id == run_id)
            .group_by(run_episodes.c.status)
        ).all()
    )
    if counts.get("open"):
        return False
    status = "complete" if set(counts) == {"finished"} else "timed_out"
    return bool(
        connection.execute(
            update(runs)
            .where(runs.c.run_id == run_id, runs.c.status == "open")
            .values(status=status, completed_at=now)
        ).rowcount
    )
