"""The bounded store of episodes, shared by every door of the server.

Episodes live until they have been idle for `ttl` seconds; at most `capacity` exist at
once, and a reset with a client-chosen id past that answers StoreFull (503) rather than
evicting a live episode. Each task also has one default episode, used by calls that carry no
episode id, as the original single-episode server did: the latest reset without an id.
Defaults never expire and do not count toward the capacity (there is one per task); when a
newer reset replaces one, it joins the other episodes, so its id works until it expires
(or is dropped at once if the store is full of live episodes).

Ids: a reset without an id gets an unguessable server-issued id (`dce:` + 128 random bits),
which no client can reset or take over; a client-chosen id is a shared name (whoever sends
it addresses, and may reset, that episode). A lookup answers "no such episode" the same
way whether the id is absent or belongs to another task, so answers reveal nothing.

Issued episodes (the leaderboard's) are made by the server, not by a reset: `issue` adds
one under its server-chosen id, a reset naming that id joins it instead of replacing it
(one attempt per instance), and only `withdraw` removes it (their owner bounds them).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from dataclean_env.doors import check_client_id, check_episode_id, start_episode
from dataclean_env.episode import Episode
from dataclean_env.errors import StoreFull, UnknownEpisode
from dataclean_env.tasks import TaskRegistry


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
    ):
        self.registry = registry
        self.capacity = capacity
        self.ttl = ttl_seconds
        self.clock = clock
        self._episodes: dict[str, Episode] = {}
        self._defaults: dict[str, Episode] = {}
        self._default_ids: dict[str, Episode] = {}  # the defaults, by episode id
        self._issued: dict[str, Episode] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Episodes that count toward the capacity (client and replaced-default ids)."""
        return len(self._episodes)

    def held(self) -> int:
        """Every episode held: those of `len`, the tasks' defaults, the leaderboard's."""
        with self._lock:
            return len(self._episodes) + len(self._defaults) + len(self._issued)

    def reset(
        self,
        task_id: str,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
        blind: bool = False,
    ) -> Episode:
        """A fresh episode of `task_id`. Without an id it gets a server-issued one and
        becomes the task's default episode. An issued episode's id joins that episode as it
        stands (one attempt per leaderboard instance)."""
        if episode_id is not None and (issued := self.issued(episode_id)) is not None:
            return issued
        if episode_id is not None:
            check_client_id(episode_id)
        # Outside the lock: building a task may take a moment.
        episode = start_episode(self.registry, task_id, seed, split, episode_id)
        episode.blind = blind
        episode.last_used = self.clock()
        if episode_id is None:
            with self._lock:
                previous = self._defaults.get(task_id)
                self._defaults[task_id] = episode
                self._default_ids[episode.episode_id] = episode
                if previous is not None:
                    del self._default_ids[previous.episode_id]
                    self._evict_idle()
                    if len(self._episodes) < self.capacity:  # else it goes, as if evicted
                        self._episodes[previous.episode_id] = previous
            return episode
        with self._lock:
            if episode_id not in self._episodes:
                self._evict_idle()
                if len(self._episodes) >= self.capacity:
                    raise StoreFull(
                        f"the server holds its maximum of {self.capacity} episodes; "
                        "retry later or reuse an episode id"
                    )
            self._episodes[episode_id] = episode
        return episode

    def get(self, episode_id: str, task_id: str | None = None) -> Episode:
        """The episode with this id (of `task_id`, when given); UnknownEpisode otherwise."""
        check_episode_id(episode_id)  # bounded before any lookup or echo
        now = self.clock()
        with self._lock:
            # Issued episodes never idle-expire: their owner (the leaderboard) bounds them.
            episode = self._issued.get(episode_id) or self._episodes.get(episode_id)
            if (
                episode_id not in self._issued
                and episode is not None
                and episode.last_used < now - self.ttl
            ):
                del self._episodes[episode_id]  # idle too long: gone, as if evicted
                episode = None
            elif episode is None:
                episode = self._default_ids.get(episode_id)
        if episode is None or (task_id is not None and episode.spec.task_id != task_id):
            raise unknown_episode(episode_id)
        episode.last_used = now
        return episode

    def default(self, task_id: str) -> Episode:
        """The task's default episode, started on first use."""
        with self._lock:
            episode = self._defaults.get(task_id)
        return episode if episode is not None else self.reset(task_id)

    # ── issued episodes ───────────────────────────────────────────────────
    def issue(self, episode: Episode) -> None:
        with self._lock:
            self._issued[episode.episode_id] = episode

    def issued(self, episode_id: str) -> Episode | None:
        with self._lock:
            return self._issued.get(episode_id)

    def withdraw(self, episode_id: str) -> None:
        with self._lock:
            self._issued.pop(episode_id, None)

    def _evict_idle(self) -> None:
        deadline = self.clock() - self.ttl
        for episode_id in [k for k, e in self._episodes.items() if e.last_used < deadline]:
            del self._episodes[episode_id]
