"""In-process use: `DataCleaningEnv(task_id=...).reset()` / `.step(Action(...))` / `.state()`.

Drives the same `Episode` as the server. `step` never raises for a bad action: it answers
with the error in `observation.message` and `info["error"]`, and the table is untouched.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from dataclean_env.episode import Episode
from dataclean_env.errors import EnvError, InvalidAction
from dataclean_env.schemas import Action, EpisodeState, StepResult
from dataclean_env.tasks import TaskRegistry, default_registry


class DataCleaningEnv:
    def __init__(
        self,
        task_id: str = "easy_dedup_rename",
        seed: int | None = None,
        registry: TaskRegistry | None = None,
    ):
        self.registry = registry or default_registry()
        self.registry.spec(task_id)  # unknown task: fail here, not on the first reset
        self.task_id = task_id
        self.seed = seed
        self._episode: Episode | None = None
        self._resets = 0

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, split: str = "train"
    ) -> StepResult:
        if seed is not None:
            self.seed = seed
        self._resets += 1
        episode_id = episode_id or f"{self.task_id}-local-{self._resets}"
        self._episode = Episode(episode_id, self.registry.make(self.task_id, self.seed, split))
        return self._episode.result()

    def step(self, action: Action | dict[str, Any]) -> StepResult:
        episode = self._episode or self._start()
        try:
            action = action if isinstance(action, Action) else Action.model_validate(action)
            return episode.step(action)
        except EnvError as error:
            return episode.result(error)
        except ValidationError as error:  # a dict that is not an action envelope
            return episode.result(InvalidAction(str(error)))

    def state(self) -> EpisodeState:
        return (self._episode or self._start()).state()

    def _start(self) -> Episode:
        self.reset()
        assert self._episode is not None
        return self._episode
