"""The bounded store of episodes, shared by every door of the server.

Episodes live until they have been idle for `ttl` seconds; at most `capacity` exist at
once. A reset that needs a place in a full store evicts the least recently used episode idle
for at least `idle` seconds; with none that idle it answers StoreFull (503, Retry-After: when
the first one will be) rather than evicting an episode in use. Each client (the address the
rate limiter keys on) holds at most `per_client` episodes: past it, its own least recently
used idle one makes room, else ClientQuotaReached (503), so one client cannot take the pool.

Each task also has one default episode, used by calls that carry no episode id, as the
original single-episode server did: the latest reset without an id. Defaults never expire
and do not count toward the capacity (there is one per task), but do toward their client's
quota; when a newer reset replaces one, it joins the other episodes, so its server-issued id
works until it expires. That move needs a place like any other: a full store of episodes in
use refuses the new reset rather than drop the replaced one mid-episode. A replaced default
that no call has addressed by its id is in use by nobody (id-less calls reach only the
current default): it makes room first, whatever its age, and makes its own room when nothing
else can, so a client that resets without ids, as CleanifyAI's do, is never refused.

Ids: a reset without an id gets an unguessable server-issued id (`dce:` + 128 random bits),
which no client can reset or take over; a client-chosen id is a shared name (whoever sends
it addresses, and may reset, that episode). A lookup answers "no such episode" the same
way whether the id is absent or belongs to another task, so answers reveal nothing.

Issued episodes (the leaderboard's) are made by the server, not by a reset: `issue` adds
one under its server-chosen id (with the function that makes it on first join: a suite run
issues thousands, whose tables are made only as they are played), a reset naming that id
joins it instead of replacing it (one attempt per instance), and only `withdraw` removes it.
An issued id holds nothing until it is first joined (any call naming it: a reset, a step, a
state read): the built episode then takes a place and its joiner's quota as a reset would
(refused as a reset would be: StoreFull, ClientQuotaReached, and the id stays joinable),
never idles out nor makes room for another, and gives both back when it ends (`release`;
it stays readable until withdrawn). Its place is free from its deadline on
(`Episode.seconds_left`), before its owner's sweep records its end, and a refusal's
Retry-After is the time until the first place frees: an idle episode's, or a deadline.

Processes: the store holds only episodes whose home is its process (`affinity`): a reset,
lookup or join of an id homed elsewhere raises Misdirected (421) before anything is made,
and the ids it issues are drawn until their home is this process. The capacity and the
quota are the whole server's when the processes share a limit store (`counts`,
`limit_store`): a reset that needs a place counts what the other processes hold too, and
the store full means all processes together hold `capacity`. Room is still made only here,
by evicting this process's own least recently used idle episode; when this process has none
idle, the reset is refused, even if another process holds idle ones (they are evicted by
resets homed there, or expire). What this process holds is published only when a reset
settles (a step that finds an episode expired drops it here; the next reset publishes).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from dataclean_env.engine.doors import start_episode
from dataclean_env.engine.episode import Episode
from dataclean_env.engine.episode_ids import (
    LEADERBOARD_PREFIX,
    check_client_id,
    check_episode_id,
    new_episode_id,
)
from dataclean_env.engine.step_memory import StepMemory
from dataclean_env.errors import ClientQuotaReached, StoreFull, UnknownEpisode, UnknownTask
from dataclean_env.server.limits.limit_store import TOTAL, Counts, Settlement
from dataclean_env.server.processes.affinity import Place
from dataclean_env.tasks import TaskRegistry

MAX_TASK_ID = 128
LEDGERS = 65_536  # instances whose labels are remembered per client (each a few rows' keys)


def unknown_episode(episode_id: str) -> UnknownEpisode:
    # One answer for "absent", "expired" and "another task's": no existence oracle.
    return UnknownEpisode(
        f"no episode {episode_id!r} here (it may have expired, or the server restarted: "
        "episodes live in memory); reset to start one"
    )


class EpisodeStore:
    def __init__(
        self,
        registry: TaskRegistry,
        capacity: int,
        ttl_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        idle_seconds: float | None = None,
        per_client: int | None = None,
        place: Place | None = None,
        memory: StepMemory | None = None,
        counts: Counts | None = None,
    ):
        self.registry = registry
        self.place = place or Place()
        self.memory = memory  # the step memory its episodes share (None: each computes its own)
        self.capacity = capacity
        self.ttl = ttl_seconds
        self.idle = ttl_seconds if idle_seconds is None else min(idle_seconds, ttl_seconds)
        self.per_client = per_client
        self.clock = clock
        self._episodes: dict[str, Episode] = {}
        self._defaults: dict[str, Episode] = {}
        self._default_ids: dict[str, Episode] = {}  # the defaults, by episode id
        self._issued: dict[str, Issued] = {}
        self._built: dict[str, Episode] = {}  # issued episodes joined (those in play are
        # in `_episodes` too, under their joiner, until they end)
        self._owners: dict[str, str] = {}  # episode id -> the client whose reset made it
        self._owned_by: dict[str, set[str]] = {}  # `_owners` inverted: a client's ids
        # At most the oldest last use in `_episodes` (last uses only grow), so a reset looks
        # for expired episodes only when there may be one.
        self._oldest_use = math.inf
        # Defaults (current or replaced) that no call has addressed by their id yet: a
        # replaced one makes room first, whatever its age (see `_make_room`).
        self._unaddressed: set[str] = set()
        # The server's count of episodes (with the other processes', when shared).
        self.counts = counts or Counts()
        self._changed: set[str] = set()  # clients whose count is not yet published
        # (client, task, seed, split) -> rows labelled there, oldest use first
        self._ledgers: dict[tuple[str, str, int | None, str], set[str]] = {}
        self._lock = threading.Lock()
        self._admitting = threading.Lock()

    def __len__(self) -> int:
        """Episodes that count toward the capacity (client and replaced-default ids)."""
        return len(self._episodes)

    def held(self) -> int:
        """Every episode held: those of `len`, the tasks' defaults, the leaderboard's."""
        with self._lock:
            unplayed = len(self._issued.keys() - self._episodes.keys())
            return len(self._episodes) + len(self._defaults) + unplayed

    def reset(
        self,
        task_id: str,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
        blind: bool = False,
        client: str | None = None,
    ) -> Episode:
        """A fresh episode of `task_id`, held for `client` (None: counted under no quota).
        Without an id it gets a server-issued one and becomes the task's default episode. An
        issued episode's id joins that episode as it stands (one attempt per leaderboard
        instance)."""
        if episode_id is not None:
            check_episode_id(episode_id)
        self.place.check(episode_id)
        if episode_id is not None and (issued := self.issued(episode_id, client)) is not None:
            return issued
        if episode_id is not None:
            check_client_id(episode_id)
        # Outside the lock: building a task may take a moment.
        name = self.place.mint(new_episode_id) if episode_id is None else episode_id
        episode = start_episode(self.registry, task_id, seed, split, name, memory=self.memory)
        episode.blind = blind
        if episode.label_budget:
            episode.share_labels(self._ledger(client, task_id, seed, split))
        with self._admitting:  # one admission at a time; steps take only `_lock`
            with self._lock:
                previous = self._defaults.get(task_id) if episode_id is None else None
                known = episode_id in self._episodes if episode_id is not None else False
            needs_place = previous is not None if episode_id is None else not known
            quota = client is not None and self.per_client is not None
            # A reset that takes no place and counts under no quota (a default's first use,
            # on a step) settles nothing: it never waits on the shared store.
            settling = self.counts.settle("episodes", client) if quota or needs_place else None
            with settling or _nothing() as others, self._lock:
                self._place(episode, task_id, episode_id, client, needs_place, others)
                others.rows = self._rows() if self.counts.shared else {}
        return episode

    def _ledger(self, client: str | None, task_id: str, seed: int | None, split: str) -> set[str]:
        """The rows `label` revealed to `client` on this instance, across its episodes and
        resets (the newest `LEDGERS` instances are remembered)."""
        key = (client or "", task_id, seed, split)
        with self._lock:
            ledger = self._ledgers.pop(key, None)
            self._ledgers[key] = ledger = set() if ledger is None else ledger
            while len(self._ledgers) > LEDGERS:
                del self._ledgers[next(iter(self._ledgers))]
        return ledger

    def _place(
        self,
        episode: Episode,
        task_id: str,
        episode_id: str | None,
        client: str | None,
        needs_place: bool,
        others: Settlement,
    ) -> None:
        """Hold `episode` (room made first, or a refusal that moves nothing); `_lock` held."""
        now = episode.last_used = self.clock()
        self._drop_expired(now)
        if episode_id is None:
            previous = self._defaults.get(task_id)
            # Checked before anything moves: a refusal leaves the store as it was.
            try:
                self._admit(client, now, None, needs_place, others)
                keep = True
            except (ClientQuotaReached, StoreFull):
                if previous is None or previous.episode_id not in self._unaddressed:
                    raise
                # No room to keep the default it replaces, which no call addressed by its
                # id: that one makes the room (`_make_room`'s rule, for its own replacement).
                self._admit(client, now, previous.episode_id, False, others)
                keep = False
            self._defaults[task_id] = episode
            self._default_ids[episode.episode_id] = episode
            self._unaddressed.add(episode.episode_id)
            if previous is not None:
                del self._default_ids[previous.episode_id]
                if keep:
                    self._hold(previous.episode_id, previous)
                else:
                    self._unaddressed.discard(previous.episode_id)
                    self._disown(previous.episode_id)
        else:
            self._admit(client, now, episode_id, needs_place, others)
            self._hold(episode_id, episode)
        self._disown(episode.episode_id)
        if client is not None:
            self._owners[episode.episode_id] = client
            self._owned_by.setdefault(client, set()).add(episode.episode_id)
            self._changed.add(client)

    def _hold(self, episode_id: str, episode: Episode) -> None:
        self._episodes[episode_id] = episode
        self._oldest_use = min(self._oldest_use, episode.last_used)

    def get(
        self, episode_id: str, task_id: str | None = None, client: str | None = None
    ) -> Episode:
        """The episode with this id (of `task_id`, when given); UnknownEpisode otherwise.
        `client`: who joins it, if it is an issued episode not yet built."""
        check_episode_id(episode_id)  # bounded before any lookup or echo
        self.place.check(episode_id)
        now = self.clock()
        # Issued episodes never idle-expire: they end by their owner's (the leaderboard's) rules.
        episode = self.issued(episode_id, client)
        with self._lock:
            if episode is None:
                episode = self._episodes.get(episode_id)
            if (
                episode_id not in self._issued
                and episode is not None
                and episode.last_used < now - self.ttl
            ):
                self._evict(episode_id)  # idle too long: gone
                episode = None
            elif episode is None:
                episode = self._default_ids.get(episode_id)
            if episode is None or (task_id is not None and episode.spec.task_id != task_id):
                raise unknown_episode(episode_id)
            self._unaddressed.discard(episode_id)
        episode.last_used = now
        return episode

    def known(self, task_id: str) -> None:
        """UnknownTask (404) unless the registry has `task_id`; an absurdly long id is not
        echoed back."""
        if len(task_id) > MAX_TASK_ID:
            raise UnknownTask(f"unknown task (task ids are at most {MAX_TASK_ID} characters)")
        self.registry.spec(task_id)

    def find(
        self, task_id: str | None, episode_id: str | None, client: str | None = None
    ) -> Episode:
        """The episode a call addresses: by id, else the default episode of the task (else
        of the first task). An id of another task's episode is answered like an absent one
        (404), revealing nothing. `client`: the caller (who joins an issued episode)."""
        if episode_id is not None:
            return self.get(episode_id, task_id, client)
        return self.default(task_id or self.registry.task_ids()[0])

    def default(self, task_id: str) -> Episode:
        """The task's default episode, started on first use."""
        self.place.check(None)
        with self._lock:
            episode = self._defaults.get(task_id)
        return episode if episode is not None else self.reset(task_id)

    # ── issued episodes ───────────────────────────────────────────────────
    def issue(
        self,
        episode_id: str,
        build: Callable[[], Episode | None],
        joined: Callable[[Episode], object] | None = None,
    ) -> None:
        """Hold `episode_id` for its issuer. Its first join calls `build` (None: it is gone)
        and, once the store has taken the episode, `joined` with it."""
        with self._lock:
            self._issued[episode_id] = Issued(build, joined)

    def issued(self, episode_id: str, client: str | None = None) -> Episode | None:
        """The issued episode with this id (None: no such id), built on its first join, for
        `client` (None: counted under no quota): StoreFull or ClientQuotaReached, as for a
        reset, if it has no room (the id stays issued; nothing was kept)."""
        with self._lock:
            issued = self._issued.get(episode_id)
            episode = self._built.get(episode_id)
        if issued is None or episode is not None:
            return episode
        made = issued.build()  # outside the lock: building a table takes a moment
        if made is None:
            return None
        with self._admitting, self.counts.settle("episodes", client) as others, self._lock:
            episode = self._built.get(episode_id)  # two first joins at once: one is kept
            if episode is None and episode_id in self._issued:
                now = made.last_used = self.clock()
                self._drop_expired(now)
                self._admit(client, now, None, True, others)
                self._episodes[episode_id] = self._built[episode_id] = episode = made
                if client is not None:
                    self._owners[episode_id] = client
                    self._owned_by.setdefault(client, set()).add(episode_id)
                    self._changed.add(client)
                joined = issued.joined
            else:
                joined = None
            others.rows = self._rows() if self.counts.shared else {}
        if episode is not None and joined is not None:
            joined(episode)
        return episode

    def unjoined(self, episode_id: str) -> bool:
        """Whether `episode_id` is issued and not yet joined (a call naming it builds it)."""
        with self._lock:
            return episode_id in self._issued and episode_id not in self._built

    def join(self, episode_id: str, client: str | None = None) -> Episode | None:
        """The issued episode a /ws reset names; Misdirected for a leaderboard id homed on
        another process (the socket must be opened there: `/ws?episode_id=...`)."""
        if episode_id.startswith(LEADERBOARD_PREFIX):
            self.place.check(episode_id)
        return self.issued(episode_id, client)

    def release(self, episode_id: str) -> None:
        """An issued episode's end: it gives back its place and its joiner's quota (it stays
        readable until withdrawn)."""
        with self._lock:
            self._release(episode_id)

    def _release(self, episode_id: str) -> None:
        if episode_id in self._issued and self._episodes.pop(episode_id, None) is not None:
            self._disown(episode_id)

    def withdraw(self, episode_id: str) -> None:
        with self._lock:
            self._release(episode_id)
            self._issued.pop(episode_id, None)
            self._built.pop(episode_id, None)

    # ── room (called with the lock held) ──────────────────────────────────
    def _admit(
        self,
        client: str | None,
        now: float,
        replacing: str | None,
        needs_place: bool,
        others: Settlement,
    ) -> None:
        """Make room for one more episode of `client` (evicting this process's idle ones),
        or raise. `others`: what the server's other processes hold."""
        if client is not None and self.per_client is not None:
            while (
                others.client + len(own := self._owned(client, replacing) - self._late())
                >= self.per_client
            ):
                if self._make_room(now, own):
                    continue
                wait = self._retry_after(now, own)
                raise ClientQuotaReached(
                    f"this client holds its maximum of {self.per_client} episodes, none idle "
                    f"for {self.idle:g} s{_elsewhere(others.client)}; reuse one (reset its id) "
                    f"or retry in {wait} s"
                ).retry_in(wait)
        while needs_place and others.total + len(self._episodes) - len(self._late()) >= (
            self.capacity
        ):
            if self._make_room(now, set(self._episodes)):
                continue
            wait = self._retry_after(now, set(self._episodes))
            raise StoreFull(
                f"the server holds its maximum of {self.capacity} episodes, none idle for "
                f"{self.idle:g} s{_elsewhere(others.total)}; retry in {wait} s or reuse an "
                "episode id"
            ).retry_in(wait)

    def _owned(self, client: str, replacing: str | None) -> set[str]:
        return self._owned_by.get(client, set()) - {replacing}

    def _rows(self) -> dict[str, int]:
        """What this process publishes: its capacity count, and the quota counts of the
        clients whose count changed since the last publication."""
        rows = {TOTAL: len(self._episodes)}
        if self._changed:
            rows.update((client, len(self._owned_by.get(client, ()))) for client in self._changed)
            self._changed.clear()
        return rows

    def _make_room(self, now: float, among: set[str]) -> bool:
        """Evict the least recently used of `among` that no one can be using: first a
        replaced default no call addressed by its id (a client resetting without ids, as
        CleanifyAI's do, replaces its default every episode and would otherwise fill its
        quota with them), else one idle for `idle` s. False if there is none. Never an issued
        episode in play: its joiner plays it to its end, which gives its place back."""
        held = [(e.last_used, i) for i, e in self._evictable() if i in among]
        unaddressed = [(used, i) for used, i in held if i in self._unaddressed]
        idle = unaddressed or [(used, i) for used, i in held if used <= now - self.idle]
        if not idle:
            return False
        self._evict(min(idle)[1])
        return True

    def _retry_after(self, now: float, among: set[str]) -> int:
        """Whole seconds until the first of `among` frees its place (at least 1): the least
        recently used turns idle, or an issued one in play reaches its deadline."""
        waits = [e.last_used + self.idle - now for i, e in self._evictable() if i in among]
        waits += [left for i, left in self._deadlines() if i in among]
        if not waits:  # only defaults: they never make room
            return ClientQuotaReached.retry_after or 30
        return max(1, math.ceil(min(waits)))

    def _deadlines(self) -> Iterator[tuple[str, float]]:
        """The issued episodes in play, with the seconds until their deadlines end them."""
        for episode_id, episode in self._episodes.items():  # bounded by the capacity
            if episode_id in self._issued and (left := episode.seconds_left()) is not None:
                yield episode_id, left

    def _late(self) -> set[str]:
        """Issued episodes in play past their deadline: their places are free already
        (their owner's sweep records their end and releases them)."""
        return {episode_id for episode_id, left in self._deadlines() if left <= 0}

    def _drop_expired(self, now: float) -> None:
        if not self._oldest_use < now - self.ttl:
            return
        for episode_id in [k for k, e in self._evictable() if e.last_used < now - self.ttl]:
            self._evict(episode_id)
        self._oldest_use = min((e.last_used for _, e in self._evictable()), default=math.inf)

    def _evictable(self) -> Iterator[tuple[str, Episode]]:
        """The held episodes that idle out (all but the issued ones in play)."""
        issued = self._issued
        return ((i, e) for i, e in self._episodes.items() if i not in issued)

    def _evict(self, episode_id: str) -> None:
        del self._episodes[episode_id]
        self._unaddressed.discard(episode_id)
        self._disown(episode_id)

    def _disown(self, episode_id: str) -> None:
        if (client := self._owners.pop(episode_id, None)) is not None:
            owned = self._owned_by[client]
            owned.discard(episode_id)
            if not owned:
                del self._owned_by[client]
            self._changed.add(client)


@dataclass(frozen=True)
class Issued:
    """An issued id's episode: how its first join makes it, and whom to tell."""

    build: Callable[[], Episode | None]
    joined: Callable[[Episode], object] | None


@contextmanager
def _nothing() -> Iterator[Settlement]:
    yield Settlement()


def _elsewhere(count: int) -> str:
    return f" here ({count} of them on the server's other processes)" if count else ""
