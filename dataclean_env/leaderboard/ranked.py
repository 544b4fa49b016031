"""A leaderboard episode: an `Episode` on a secret instance, blind, with one attempt, a step
budget, a bound on refused actions and on the trace's size, and a wall-clock deadline.

It keeps the trace of accepted actions as they were sent (what the audit replays) and calls
`on_end` inside the step that ends it (or the sweep that times it out), so the record is
written before the answer that reveals the score is sent. Finishing is idempotent: a finish
after the end answers the recorded result (retrying the record if its write failed), so a
client whose finish met a database outage retries it. Any other action after the end, and a
finish after a time-out (it came too late), is refused (one attempt per instance).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError, EpisodeFinished, InvalidParameters
from dataclean_env.schemas import Action, StepResult
from dataclean_env.tasks import Task

MAX_TRACE_BYTES = 256_000  # the JSON of all accepted actions of one episode


class RankedEpisode(Episode):
    step_waits = True  # the step that ends it grades the reference plan and commits a record

    def __init__(
        self,
        episode_id: str,
        task: Task,
        deadline: float,
        on_end: Callable[[RankedEpisode], None],
        clock: Callable[[], float] = time.monotonic,
    ):
        super().__init__(episode_id, task)
        self.blind = True
        # Its scores stay hidden after its end until its run ends (`reward_visibility`): a
        # run's score, or one rollout's, must not inform the rest of the run.
        self.sealed = True
        self.label_budget = 0  # labels reveal gold: never on the leaderboard
        self.deadline = deadline  # on `clock`
        self.clock = clock
        self.on_end = on_end
        self.started_at = datetime.now(UTC)
        self.ended_at: datetime | None = None
        self.status = "open"  # then "finished" or "timed_out"
        self.recorded = False  # set by whoever wrote the record
        self.trace: list[dict[str, Any]] = []
        self._trace_bytes = 0

    def step(self, action: Action) -> StepResult:
        self.expire_if_late()
        if self.status == "finished" and action.operation == "finish":
            return self.finished_again()
        if self.status != "open":
            raise EpisodeFinished(
                f"leaderboard episode {self.episode_id!r} is over ({self.status}); "
                "each instance has one attempt"
            )
        sent = {"operation": action.operation, "parameters": action.parameters}
        size = len(json.dumps(sent, default=str))
        if self._trace_bytes + size > MAX_TRACE_BYTES:
            raise InvalidParameters(
                f"this action would take the episode's trace past {MAX_TRACE_BYTES} bytes"
            )
        try:
            result = super().step(action)
        except EnvError:
            if self.done:  # the refusal allowance (Episode.step) is used up: record the end
                self.end("finished", "Too many refused actions; episode finished.")
            raise
        self.trace.append(sent)
        self._trace_bytes += size
        if self.done:
            self.end("finished")
            result = self.result()
        return result

    def finished_again(self) -> StepResult:
        """A retried finish: the recorded result, recording it first if the end's write
        failed (a database outage answers 503 again, and the retry may be retried)."""
        if not self.recorded:
            self.on_end(self)
        return self.result()

    def seconds_left(self) -> float | None:
        return None if self.status != "open" else self.deadline - self.clock()

    def expire_if_late(self) -> bool:
        """End the episode as timed out if its deadline has passed (callers hold the lock)."""
        if self.status == "open" and self.clock() > self.deadline:
            self.end("timed_out", "Time limit reached; episode finished.")
            return True
        return False

    def withdraw(self) -> None:
        """Its run was withdrawn: it ends unrecorded (callers hold the lock)."""
        if self.status == "open":
            self.status = "withdrawn"
            self.done = True
            self.ended_at = datetime.now(UTC)
            self.last_message = "This run was withdrawn from the leaderboard; episode ended."
        self.recorded = True  # nothing is recorded for a withdrawn run

    def end(self, status: str, message: str | None = None) -> None:
        self.status = status
        self.done = True
        self.ended_at = datetime.now(UTC)
        if message:
            self.last_message = message
        self.on_end(self)
