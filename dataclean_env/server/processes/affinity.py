"""Which of the server's processes is an episode's home: the app's side of the one rule
that the balancer (HAProxy, `balancer.config`) applies too.

The home of an episode id is `crc32(id) mod N` over its UTF-8 bytes (HAProxy's `crc32`
converter is zlib's CRC-32); a call that names no episode uses a task's default episode,
whose home is process 0. HAProxy reads the id from the body's `episode_id`, else the
`episode_id` query parameter, else the X-Episode-Id header (the routes' precedence), and
sends the call to its home. The app does not trust that reading: every call that creates or
serves an episode checks the id the app itself read (`Place.check`), and a process that is
not its home answers 421 MISDIRECTED. So however a client spells an id (a JSON escape,
`%5F` in a query key, a key given twice) HAProxy and the app cannot put one id on two
processes: a wrong reading costs a 421, never a second episode.

Ids the server makes (`dce:` ids of default episodes, the leaderboard's `lb-` ids) are
drawn until their home is the process that makes them (`Place.mint`: N draws on average).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

from dataclean_env.errors import Misdirected
from dataclean_env.settings import Settings

DEFAULT_HOME = 0  # the process of calls that name no episode (tasks' default episodes)


def home(episode_id: str | None, processes: int) -> int:
    """The index of the process that holds `episode_id` (None: a default episode)."""
    if episode_id is None:
        return DEFAULT_HOME
    return zlib.crc32(episode_id.encode("utf-8")) % processes


@dataclass(frozen=True)
class Place:
    """This process's index among `processes` processes (DCE_PROCESS_INDEX, DCE_PROCESSES)."""

    index: int = 0
    processes: int = 1

    @classmethod
    def of(cls, settings: Settings) -> Place:
        return cls(settings.process_index, settings.processes)

    def share(self, cap: int) -> int:
        """This process's part of a server-wide cap, so the N parts add up to at most it
        (a process holds its own episodes and sessions; at least 1 each)."""
        return max(1, cap // self.processes)

    def owns(self, episode_id: str | None) -> bool:
        return home(episode_id, self.processes) == self.index

    def check(self, episode_id: str | None) -> None:
        """Raise Misdirected unless this process is the home of `episode_id`."""
        if not self.owns(episode_id):
            where = "a named episode" if episode_id is not None else "a task's default episode"
            raise Misdirected(
                f"{where} lives on process {home(episode_id, self.processes)} of "
                f"{self.processes}, not on this one ({self.index}): send the call through the "
                "server's balancer, with the episode id in the body's 'episode_id', the "
                "'episode_id' query parameter or the X-Episode-Id header, spelt plainly"
            )

    def mint(self, draw: Callable[[], str]) -> str:
        """A fresh id from `draw` whose home is this process."""
        while not self.owns(episode_id := draw()):
            pass
        return episode_id
