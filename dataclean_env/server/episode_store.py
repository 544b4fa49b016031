"""The bounded store of episodes, shared by every door of the server.

Client-created episodes (a reset) live until they have been idle for `ttl` seconds; at most
`capacity` exist at once, and a reset past that answers StoreFull (503) rather than evicting
a live episode. Each task also has one default episode, used by calls that carry no
episode id, as the original single-episode server did; defaults never expire and do not
count toward the capacity (there is one per task).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from dataclean_env.doors import start_episode
from dataclean_env.episode import Episode
from dataclean_env.errors import StoreFull, UnknownEpisode
from dataclean_env.tasks import TaskRegistry


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
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._episodes)

    def reset(
        self,
        task_id: str,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
    ) -> Episode:
        """A fresh episode of `task_id`. Without an id it becomes the task's default episode."""
        # Outside the lock: building a task may take a moment.
        episode = start_episode(self.registry, task_id, seed, split, episode_id)
        episode.last_used = self.clock()
        if episode_id is None:
            with self._lock:
                self._defaults[task_id] = episode
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

    def get(self, episode_id: str) -> Episode:
        now = self.clock()
        with self._lock:
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

    def _evict_idle(self) -> None:
        deadline = self.clock() - self.ttl
        for episode_id in [k for k, e in self._episodes.items() if e.last_used < deadline]:
            del self._episodes[episode_id]
