"""The one way into an episode, shared by every door (REST, /ws, in-process, the runner,
/validate and the environment checker).

* `start_episode` builds an episode from checked reset options;
* `attempt` steps an episode and turns a refused action into "unchanged episode + error",
  for the doors that answer refusals in the observation rather than as HTTP errors.

What a client sent is read by `parsing.py`; which episode ids are allowed, `episode_ids.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dataclean_env.engine.episode import Episode
from dataclean_env.engine.episode_ids import LEADERBOARD_PREFIX, check_episode_id, new_episode_id
from dataclean_env.engine.parsing import parse_action
from dataclean_env.engine.step_memory import StepMemory
from dataclean_env.errors import EnvError, InvalidAction, UnknownEpisode
from dataclean_env.generation import SPLITS
from dataclean_env.schemas import Action, StepResult
from dataclean_env.table.limits import EngineLimits
from dataclean_env.tasks import TaskRegistry


def start_episode(
    registry: TaskRegistry,
    task_id: str,
    seed: int | None = None,
    split: str = "train",
    episode_id: str | None = None,
    limits: EngineLimits | None = None,
    memory: StepMemory | None = None,
) -> Episode:
    """A fresh episode of `task_id` (UnknownTask, InvalidAction on bad options), under
    `limits` (default: the engine's), taking steps over from `memory` (None: every step
    computed)."""
    registry.spec(task_id)
    if split not in SPLITS:
        raise InvalidAction(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InvalidAction("seed must be a non-negative integer")
    name = new_episode_id() if episode_id is None else check_episode_id(episode_id)
    if name.startswith(LEADERBOARD_PREFIX):
        raise UnknownEpisode(
            f"no leaderboard episode {name!r} here: ids starting with {LEADERBOARD_PREFIX!r} "
            "are issued by POST /leaderboard/runs and this one is not open (its run ended, or "
            "the server restarted: episodes live in memory); start a new run"
        )
    return Episode(name, registry.make(task_id, seed, split), limits, memory=memory)


def attempt(episode: Episode, raw: Action | Mapping[str, Any] | Any) -> StepResult:
    """Step `episode`; a refused action answers the unchanged episode with the error."""
    with episode.lock:
        try:
            return episode.step(parse_action(raw))
        except EnvError as error:
            return episode.result(error)
