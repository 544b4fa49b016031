"""The normalised score: the share of the reachable repair an agent made.

    normalised = (final - do_nothing) / (oracle - do_nothing), clipped to [0, 1]

`do_nothing` is the instance's score when the agent finishes at once, `oracle` its score
after the reference plan (`Task.reference_plan`), both computed by the server on a fresh copy of
the instance. Doing nothing normalises to 0 and the oracle to 1 on every instance; a real
table's F1 is already this (its dirty table scores 0, gold 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.schemas import Action
from dataclean_env.table.limits import untimed_limits
from dataclean_env.tasks.registry import Task

# What the normalised score means, in the words the README, the page, the runner and the
# report all use (tests hold the README and the page to this string).
MEANING = (
    "The normalised score is the share of the reachable repair the agent made: "
    "(final - do_nothing) / (oracle - do_nothing) on the same instance, clipped to [0, 1], "
    "so doing nothing scores 0 and the reference plan 1 on every instance."
)
FLOOR = 1e-9  # a smaller reachable repair counts as none


@dataclass(frozen=True)
class Anchors:
    do_nothing: float
    oracle: float

    def normalise(self, final: float) -> float:
        return min(1.0, max(0.0, self.unclipped(final)))

    def unclipped(self, final: float) -> float:
        """The share before the clip: below 0 when the agent left the table worse than it
        found it. Reported beside the clipped mean, because clipping each episode at 0 hides
        the losses of a gamble and keeps only its wins."""
        span = self.oracle - self.do_nothing
        if span <= FLOOR:  # nothing to repair: reaching the oracle is all there is
            return 1.0 if final >= self.oracle - FLOOR else 0.0
        return (final - self.do_nothing) / span


def anchors(make: Callable[[], Task]) -> Anchors:
    """The do-nothing and oracle scores of the instance `make` builds (afresh each time)."""
    idle = Episode("do-nothing", make(), untimed_limits())
    idle.step(Action(operation="finish", parameters={}))
    task = make()
    oracle = Episode("oracle", task, untimed_limits())
    for planned in task.reference_plan:
        if oracle.done:
            break
        try:
            oracle.step(Action.model_validate(planned))
        except EnvError:  # a plan step the engine refuses scores nothing; go on
            continue
    if not oracle.done:
        oracle.step(Action(operation="finish", parameters={}))
    return Anchors(idle.score, oracle.score)
