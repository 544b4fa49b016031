"""What the leaderboard needs of the server's episode store (`server.store.episode_store`
has it): the leaderboard sits below the server, so it names the store's abilities here
rather than importing it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from dataclean_env.engine.episode import Episode


class IdMinter(Protocol):
    def mint(self, draw: Callable[[], str]) -> str:
        """A fresh id from `draw` whose home is this process."""
        ...


class EpisodeHolder(Protocol):
    """The store of the process that serves a run's episodes."""

    @property
    def place(self) -> IdMinter: ...

    def issue(
        self,
        episode_id: str,
        build: Callable[[], Episode | None],
        joined: Callable[[Episode], object] | None = None,
    ) -> None:
        """Hold `episode_id`; its first join calls `build`, then `joined`."""
        ...

    def unjoined(self, episode_id: str) -> bool: ...

    def release(self, episode_id: str) -> None: ...

    def withdraw(self, episode_id: str) -> None: ...
