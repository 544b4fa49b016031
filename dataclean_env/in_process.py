"""In-process use: `DataCleaningEnv(task_id=...).reset()` / `.step(Action(...))` / `.state()`.

The engine's implementation of `protocol.EnvProtocol` (what reset, step and state promise is
said there once), driving the same `Episode` through the same doors as the server. What it
returns is the caller's own: the engine's results share lists and dicts with the
other episodes of the task (their opening, and the step memory if one is given), so the
caller gets a copy read back from the result's JSON (the bytes the server would send).
Without a `memory` every step is computed: one caller's episodes rarely repeat a step.
"""

from __future__ import annotations

from typing import Any

from dataclean_env.engine.doors import attempt, start_episode
from dataclean_env.engine.episode import Episode
from dataclean_env.engine.step_memory import StepMemory
from dataclean_env.schemas import Action, EpisodeState, StepResult
from dataclean_env.table.limits import EngineLimits
from dataclean_env.tasks import TaskRegistry, default_registry


class DataCleaningEnv:
    """The environment for a Python caller in this process (Gymnasium's role): reset, step
    and state return the REST models (`StepResult`, `EpisodeState`). Not to be confused with
    `DataCleaningEnvironment`, the server's OpenEnv adaptor that each /ws and MCP session
    drives; `RemoteDataCleaningEnv` is this same protocol over /ws."""

    def __init__(
        self,
        task_id: str = "easy_dedup_rename",
        seed: int | None = None,
        registry: TaskRegistry | None = None,
        memory: StepMemory | None = None,
        limits: EngineLimits | None = None,
    ):
        self.registry = registry or default_registry()
        self.registry.spec(task_id)  # unknown task: fail here, not on the first reset
        self.task_id = task_id
        self.seed = seed
        self.memory = memory
        self.limits = limits  # None: the engine's, time limit included
        self._episode: Episode | None = None
        self._resets = 0

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
        task_id: str | None = None,
    ) -> StepResult:
        if task_id is not None:
            self.registry.spec(task_id)  # unknown: refused before the current task changes
            self.task_id = task_id
        if seed is not None:
            self.seed = seed
        self._resets += 1
        episode_id = episode_id or f"{self.task_id}-local-{self._resets}"
        self._episode = start_episode(
            self.registry, self.task_id, self.seed, split, episode_id, self.limits, self.memory
        )
        return _own(self._episode.result())

    def step(self, action: Action | dict[str, Any]) -> StepResult:
        return _own(attempt(self._episode or self._start(), action))

    def state(self) -> EpisodeState:
        state = (self._episode or self._start()).state()
        return EpisodeState.model_validate_json(state.model_dump_json())

    @property
    def episode(self) -> Episode | None:
        """The engine's episode itself, for harnesses that read gold (the runner's rows
        lost): a caller who changes it changes the episode."""
        return self._episode

    def close(self) -> None:
        self._episode = None

    def _start(self) -> Episode:
        self.reset()
        assert self._episode is not None
        return self._episode


def _own(result: StepResult) -> StepResult:
    """A copy of `result` that shares no object with the engine or another episode."""
    return StepResult.model_validate_json(result.json_bytes())
