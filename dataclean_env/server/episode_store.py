"""The bounded store of episodes, shared by every door of the server.

Client-created episodes (a reset) live until they have been idle for `ttl` seconds; at most
`capacity` exist at once, and a reset past that answers StoreFull (503) rather than evicting
a live episode. Each task also has one default episode, used by calls that carry no
episode id, as the original single-episode server did; defaults never expire and do not
count toward the capacity (there is one per task).

Issued episodes (the leaderboard's) are made by the server, not by a reset: `issue` adds
one under its server-chosen id, a reset naming that id joins it instead of replacing it
(one attempt per instance), and only `withdraw` removes it (their owner bounds them).
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable

from dataclean_env.episode import Episode
from dataclean_env.errors import InvalidAction, StoreFull, UnknownEpisode
from dataclean_env.tasks import TaskRegistry

_EPISODE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def check_episode_id(episode_id: str) -> str:
    if not isinstance(episode_id, str) or not _EPISODE_ID.match(episode_id):
        raise InvalidAction(
            "episode_id must be 1 to 128 characters of letters, digits, '.', '_', ':' or '-'"
        )
    return episode_id


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
        self._issued: dict[str, Episode] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._episodes)

    def reset(
        self,
        task_id: str,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
        blind: bool = False,
    ) -> Episode:
        """A fresh episode of `task_id`. Without an id it becomes the task's default episode.
        An issued episode's id joins that episode as it stands."""
        if episode_id is not None and (issued := self.issued(episode_id)) is not None:
            return issued
        task = self.registry.make(task_id, seed, split)  # outside the lock: may take a moment
        if episode_id is None:
            episode = Episode(f"{task_id}-{uuid.uuid4().hex[:12]}", task)
            episode.blind = blind
            episode.last_used = self.clock()
            with self._lock:
                self._defaults[task_id] = episode
            return episode
        episode = Episode(check_episode_id(episode_id), task)
        episode.blind = blind
        episode.last_used = self.clock()
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

    def get(self, episode_id: str) -> Episode:
        now = self.clock()
        with self._lock:
            issued = self._issued.get(episode_id)  # never idle-expired: its owner bounds it
            if issued is not None:
                issued.last_used = now
                return issued
            episode = self._episodes.get(episode_id)
            if episode is not None and episode.last_used < now - self.ttl:
                del self._episodes[episode_id]  # idle too long: gone, as if evicted
                episode = None
            elif episode is None:
                episode = next(
                    (e for e in self._defaults.values() if e.episode_id == episode_id), None
                )
        if episode is None:
            raise UnknownEpisode(f"no episode {episode_id!r} (it may have expired); reset first")
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
