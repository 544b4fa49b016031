"""The one way into an episode, shared by every door (REST, /ws, in-process, the runner,
/validate and the environment checker).

* `parse_reset_options` reads the reset options and `start_episode` builds the episode;
* `parse_action` turns whatever a client sent into an `Action` or an `InvalidAction`
  (the REST body, the /ws message and a Python dict all go through it);
* `attempt` steps an episode and turns a refused action into "unchanged episode + error",
  for the doors that answer refusals in the observation rather than as HTTP errors.

Every validation error a client sees is written by `errors.describe`, so the same bad
action reads the same at every door.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from dataclean_env.engine.episode import Episode
from dataclean_env.engine.step_memory import StepMemory
from dataclean_env.errors import EnvError, InvalidAction, UnknownEpisode, describe
from dataclean_env.generation import SPLITS
from dataclean_env.schemas import MAX_EPISODE_ID, Action, ResetRequest, StepResult
from dataclean_env.table.limits import EngineLimits
from dataclean_env.tasks import TaskRegistry

EPISODE_ID_CHARS = rf"[A-Za-z0-9._:-]{{1,{MAX_EPISODE_ID}}}"
_EPISODE_ID = re.compile(EPISODE_ID_CHARS)  # fullmatch: "$" would allow a "\n"
SERVER_PREFIX = "dce:"  # server-issued ids only (clients may not start theirs with it)
# The leaderboard's episodes (issued by POST /leaderboard/runs): an id with this prefix is
# joined while its run holds it and is never created by a reset, so a lost one is a 404,
# not a fresh practice episode under a leaderboard name.
LEADERBOARD_PREFIX = "lb-"


def check_episode_id(episode_id: Any) -> str:
    if not isinstance(episode_id, str) or not _EPISODE_ID.fullmatch(episode_id):
        raise InvalidAction(
            f"episode_id must be 1 to {MAX_EPISODE_ID} characters of letters, digits, '.', '_', "
            "':' or '-'"
        )
    return episode_id


def check_client_id(episode_id: Any) -> str:
    """A client-chosen id: well-formed and not in the server's namespace (a server-issued
    id can never be reset by a client, so it cannot be taken over)."""
    if check_episode_id(episode_id).startswith(SERVER_PREFIX):
        raise InvalidAction(
            f"ids starting with {SERVER_PREFIX!r} are issued by the server and cannot be "
            "reset; reset without an id (or with an id of your own) to start a new episode"
        )
    return str(episode_id)


def new_episode_id() -> str:
    """A server-issued id: 128 random bits, so nobody can guess or take it over."""
    return SERVER_PREFIX + secrets.token_urlsafe(16)


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


# Fields OpenEnv clients add to their requests; accepted and ignored at every door.
OPENENV_EXTRAS = ("request_id", "timeout_s")


def parse_reset_options(options: Mapping[str, Any], subject: str = "reset") -> ResetRequest:
    """The one parser of reset options (task_id, seed, split, episode_id, reward_mode),
    typed; `subject` names the options in an error that points at no field."""
    fields = {k: v for k, v in options.items() if k not in OPENENV_EXTRAS}
    try:
        return ResetRequest.model_validate(fields)
    except ValidationError as exc:
        raise InvalidAction(describe(exc, subject)) from None


def parse_action(raw: Action | Mapping[str, Any] | Any, subject: str = "action") -> Action:
    """The one parser of the action envelope: an Action, an envelope (any of the spellings
    `Action` accepts) or `{"action": envelope}`. `subject` names the envelope in an error
    that points at no field."""
    if isinstance(raw, Action):
        return raw
    if isinstance(raw, Mapping) and "action" in raw:
        beside = sorted(k for k in raw if k != "action")
        if beside:
            raise InvalidAction(f"unexpected fields beside 'action': {beside}")
        raw = raw["action"]
    if not isinstance(raw, Mapping):
        raise InvalidAction(
            'the action must be a JSON object like {"operation": ..., "parameters": {...}}'
        )
    try:
        return Action.model_validate(dict(raw))
    except ValidationError as exc:
        raise InvalidAction(describe(exc, subject)) from None


def attempt(episode: Episode, raw: Action | Mapping[str, Any] | Any) -> StepResult:
    """Step `episode`; a refused action answers the unchanged episode with the error."""
    with episode.lock:
        try:
            return episode.step(parse_action(raw))
        except EnvError as error:
            return episode.result(error)
