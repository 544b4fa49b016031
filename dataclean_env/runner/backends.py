"""Where an episode runs: in this process, or on a server over OpenEnv's /ws.

Both adapters answer with the same `Step`: the observation an agent sees (the REST
observation's fields, nothing more), the episode's absolute score and its components, and
the error of a refused action. So the loop, the agents and the log lines cannot tell them
apart, and one script evaluates a checkout or a deployed Space alike.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import urlencode

from pydantic import ValidationError

from dataclean_env.engine.doors import attempt, start_episode
from dataclean_env.engine.episode import Episode
from dataclean_env.engine.limits import EngineLimits
from dataclean_env.engine.step_memory import StepMemory
from dataclean_env.errors import describe
from dataclean_env.runner.selection import EpisodeKey
from dataclean_env.schemas import Observation, StepResult, graded
from dataclean_env.tasks import TaskRegistry

OBSERVATION_FIELDS = frozenset(Observation.model_fields)


@dataclass(frozen=True)
class Step:
    observation: dict[str, Any]
    score: float  # the episode's score after this step (the reward total)
    components: dict[str, float]
    done: bool
    error: str | None = None  # why the action was refused; the episode did not change
    repair: dict[str, float] | None = None  # real tables: exact precision, recall, F1
    labels_used: int | None = None  # labelled variants: rows `label` revealed so far


class Backend(Protocol):
    def reset(self, key: EpisodeKey) -> Step: ...

    def step(self, action: dict[str, Any]) -> Step: ...

    def rows_lost(self) -> int | None:
        """Gold rows missing from the table now; None where the harness cannot see it."""
        ...

    def close(self) -> None: ...


class LocalBackend:
    """The engine in this process (`Episode`, as `environment.DataCleaningEnv` uses it)."""

    def __init__(
        self,
        registry: TaskRegistry,
        limits: EngineLimits | None = None,
        memory: StepMemory | None = None,
    ):
        self.registry = registry
        self.limits = limits  # None: the engine's, time limit included
        self.memory = memory  # the step memory its episodes share (None: every step computed)
        self.episode: Episode | None = None

    def reset(self, key: EpisodeKey) -> Step:
        episode_id = f"{key.task_id}-{key.split}-{key.seed}"
        self.episode = start_episode(
            self.registry,
            key.task_id,
            key.seed,
            key.split,
            episode_id,
            self.limits,
            self.memory,
        )
        return _local_step(self.episode.result())

    def step(self, action: dict[str, Any]) -> Step:
        return _local_step(attempt(self._current(), action))

    def rows_lost(self) -> int | None:
        episode = self._current()
        return episode.task.grader.gold_rows_missing(episode.snapshot)

    def close(self) -> None:
        self.episode = None

    def _current(self) -> Episode:
        if self.episode is None:
            raise RuntimeError("reset the environment before stepping it")
        return self.episode


def _local_step(result: StepResult) -> Step:
    error = result.info.get("error")
    return Step(
        observation=result.observation.model_dump(mode="json"),
        score=graded(result).total,
        components=graded(result).model_dump(),
        done=result.done,
        error=error["detail"] if error else None,
        repair=result.info.get("repair"),
        labels_used=result.info.get("labels_used"),
    )


class RemoteBackend:
    """A server's /ws endpoint (each connection is one episode; a reset starts the next).
    The server is asked for absolute rewards, so the score is what the loop reads."""

    def __init__(self, base_url: str, message_timeout_s: float = 60.0, home_of: str | None = None):
        # Imported here: openenv's client package pulls in gradio (~10 s), which in-process
        # runs should not pay for.
        from dataclean_env.client import DataCleaningClient

        client = DataCleaningClient(base_url=base_url, message_timeout_s=message_timeout_s)
        if home_of is not None:  # behind the balancer, the socket opens on that episode's home
            client._ws_url = f"{client._ws_url}?{urlencode({'episode_id': home_of})}"
        self._client = client.sync()
        self._client.connect()
        self._last: Step | None = None

    def reset(self, key: EpisodeKey) -> Step:
        options: dict[str, Any] = {"task_id": key.task_id, "split": key.split}
        if key.seed is not None:
            options["seed"] = key.seed
        self._last = _remote_step(self._client.reset(reward_mode="absolute", **options))
        return self._last

    def step(self, action: dict[str, Any]) -> Step:
        if self._last is None:
            raise RuntimeError("reset the environment before stepping it")
        try:
            self._last = _remote_step(self._client.step(action))
        except ValidationError as error:  # refused by the client before it is sent
            return replace(self._last, error=describe(error, "action"))
        return self._last

    def rows_lost(self) -> int | None:
        return None

    def close(self) -> None:
        self._client.close()


def _remote_step(result: Any) -> Step:
    observation = result.observation
    error = observation.info.get("error")
    components = observation.score_components
    return Step(
        observation=observation.model_dump(mode="json", include=OBSERVATION_FIELDS),
        score=observation.score,
        components=components.model_dump() if components is not None else {},
        done=result.done,
        error=error["detail"] if error else None,
        repair=observation.info.get("repair"),
        labels_used=observation.info.get("labels_used"),
    )
