"""The normalised score: the share of the reachable repair an agent made.

    normalised = (final - do_nothing) / (oracle - do_nothing), clipped to [0, 1]

`do_nothing` is the instance's score when the agent finishes at once, `oracle` its score
after the reference plan (`Task.solution`), both computed by the server on a fresh copy of
the instance. Doing nothing normalises to 0 and the oracle to 1 on every instance; a real
table's F1 is already this (its dirty table scores 0, gold 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from dataclean_env.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.limits import EngineLimits, default_limits
from dataclean_env.schemas import Action
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
        span = self.oracle - self.do_nothing
        if span <= FLOOR:  # nothing to repair: reaching the oracle is all there is
            return 1.0 if final >= self.oracle - FLOOR else 0.0
        return min(1.0, max(0.0, (final - self.do_nothing) / span))


def untimed() -> EngineLimits:
    """The engine's limits without its per-step time limit. The anchors are a property of
    the instance, not of how busy the machine is: under load, a large plan step (a real
    table's `set_cell` program) can pass the time limit and be refused, which would lower
    the oracle's score and raise every normalised score measured against it."""
    return replace(default_limits(), step_seconds=math.inf)


def anchors(make: Callable[[], Task]) -> Anchors:
    """The do-nothing and oracle scores of the instance `make` builds (afresh each time)."""
    idle = Episode("do-nothing", make(), untimed())
    idle.step(Action(operation="finish", parameters={}))
    task = make()
    oracle = Episode("oracle", task, untimed())
    for planned in task.solution:
        if oracle.done:
            break
        try:
            oracle.step(Action.model_validate(planned))
        except EnvError:  # a plan step the engine refuses scores nothing; go on
            continue
    if not oracle.done:
        oracle.step(Action(operation="finish", parameters={}))
    return Anchors(idle.score, oracle.score)
