"""The leaderboard service: runs, their blind episodes, records, self-reported submissions.

One instance per app (`app.state.leaderboard`), made of three parts: `holders` (the
database, and the processes sharing it), `runs` (every write: runs, their episodes'
lifecycle, the sweep, submissions) and `reads` (a run's record, the boards; they never
write). The database is opened on first use (and by `open()` at server start): migrations
run, the secret is loaded, runs lost by an earlier process are closed. Everything a client
is told was stored has been committed first.
"""

from __future__ import annotations

from dataclean_env.leaderboard.holders import HEARTBEAT_S, HOLDER_GONE
from dataclean_env.leaderboard.reads import Reads
from dataclean_env.leaderboard.runs import MAX_ROLLOUTS, Runs

__all__ = ["HEARTBEAT_S", "HOLDER_GONE", "MAX_ROLLOUTS", "Leaderboard"]


class Leaderboard(Runs, Reads):
    def heartbeat(self) -> None:
        """Say this process is alive, and sweep (the app's lifespan calls it every
        `HEARTBEAT_S`)."""
        if self.beat():  # nothing before the database is first opened
            self.sweep()
