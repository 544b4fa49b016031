"""The OpenEnv `Environment`: one instance per WebSocket session, each its own episode.

Reset options (the `data` of a reset frame): `task_id` (default: the first task), `seed`,
`split` (generated families), `episode_id`, and `reward_mode`: "delta" (default) makes the float reward of each step the
change in episode score, so that summing a session's step rewards gives final minus initial
score; "absolute" makes it the score itself. Either way the observation carries the
absolute `score` and its `score_components`.

A refused action is not an exception here: the step answers with the unchanged episode, the
error in `message` and `info["error"]`, and a reward of 0 (delta) — the same as in-process.
"""

from __future__ import annotations

import time
import uuid
from functools import lru_cache
from typing import Any, Literal

from pydantic import ValidationError

from dataclean_env import ENV_NAME, __version__
from dataclean_env.episode import Episode
from dataclean_env.errors import EnvError, InvalidAction
from dataclean_env.generation import SPLITS
from dataclean_env.models import CleaningAction, CleaningObservation, CleaningState
from dataclean_env.openenv_light import skip_package_inits
from dataclean_env.schemas import Action, ResetRequest, StepResult
from dataclean_env.server.episode_store import check_episode_id
from dataclean_env.server.metrics import observe_ws_step
from dataclean_env.server.scheduling import run_sized
from dataclean_env.settings import PROJECT_ROOT
from dataclean_env.tasks import TaskRegistry, default_registry
from dataclean_env.tasks.generated import FAMILIES, instance

skip_package_inits()  # see openenv_light: the interfaces alone, not gradio

from openenv.core.env_server.interfaces import Environment  # noqa: E402
from openenv.core.env_server.types import EnvironmentMetadata  # noqa: E402

RewardMode = Literal["delta", "absolute"]
SPLIT_SIZES = {"train": 1000, "eval": 200, "test": 200}  # listed instances per family
MAX_TASK_RANGE = 500
DESCRIPTION = (
    "Clean a dirty table one operation (or one program of operations) per step: deduplicate, "
    "rename, fill, fix types, normalise text, dates and phones, map aliases, clamp, repair "
    "functional dependencies, drop or set rows. Four fixed tasks, six seeded generated "
    "families with train/eval/test splits, and any dirty/clean CSV pair dropped in a folder; "
    "every step is scored cell by cell against a hidden gold table."
)


@lru_cache(maxsize=1)
def readme() -> str | None:
    path = PROJECT_ROOT / "README.md"
    return path.read_text(encoding="utf-8") if path.exists() else None


class DataCleaningEnvironment(Environment[CleaningAction, CleaningObservation, CleaningState]):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, registry: TaskRegistry | None = None):
        super().__init__()
        # Cheap on purpose: OpenEnv builds a throwaway instance for /metadata and task calls.
        self.registry = registry or default_registry()
        self.episode: Episode | None = None
        self.reward_mode: RewardMode = "delta"
        self._last_score = 0.0

    # ── reset ─────────────────────────────────────────────────────────────
    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        reward_mode: RewardMode = "delta",
        split: str = "train",
        **options: Any,
    ) -> CleaningObservation:
        request = self._reset_request(seed, episode_id, task_id, reward_mode, split, options)
        task = request.task_id or self.registry.task_ids()[0]
        name = request.episode_id or f"ws-{uuid.uuid4().hex[:12]}"
        self.episode = Episode(name, self.registry.make(task, request.seed, request.split))
        self.reward_mode = reward_mode
        self._last_score = self.episode.reward.total
        first = self._last_score if reward_mode == "absolute" else 0.0
        return self._observation(self.episode.result(), first)

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, **options: Any
    ) -> CleaningObservation:
        task_id = options.get("task_id") or self.registry.task_ids()[0]
        known = isinstance(task_id, str) and task_id in self.registry.task_ids()
        cells = self.registry.spec(task_id).cells if known else 0  # unknown: reset() refuses it
        return await run_sized(lambda: self.reset(seed, episode_id, **options), cells)

    def _reset_request(
        self, seed: Any, episode_id: Any, task_id: Any, reward_mode: Any, split: Any, options: dict
    ) -> ResetRequest:
        if options:
            raise InvalidAction(
                f"unknown reset options {sorted(options)}; "
                "accepted: task_id, seed, split, episode_id, reward_mode"
            )
        if reward_mode not in ("delta", "absolute"):
            raise InvalidAction("reward_mode must be 'delta' or 'absolute'")
        try:
            request = ResetRequest.model_validate(
                {"seed": seed, "episode_id": episode_id, "task_id": task_id, "split": split}
            )
        except ValidationError as exc:
            raise InvalidAction(str(exc.errors(include_url=False)[0]["msg"])) from None
        if request.episode_id is not None:
            check_episode_id(request.episode_id)
        if request.task_id is not None:
            self.registry.spec(request.task_id)
        return request

    # ── step ──────────────────────────────────────────────────────────────
    def step(
        self, action: CleaningAction, timeout_s: float | None = None, **kwargs: Any
    ) -> CleaningObservation:
        episode = self.episode
        if episode is None:
            self.reset()
            episode = self.episode
            assert episode is not None
        with episode.lock:
            try:
                result = episode.step(
                    Action(operation=action.operation, parameters=action.parameters)
                )
            except EnvError as error:
                result = episode.result(error)  # unchanged episode, error in message and info
        score = result.reward.total
        reward = score if self.reward_mode == "absolute" else round(score - self._last_score, 4)
        self._last_score = score
        return self._observation(result, reward)

    async def step_async(
        self, action: CleaningAction, timeout_s: float | None = None, **kwargs: Any
    ) -> CleaningObservation:
        cells = self.episode.cells if self.episode is not None else 0
        start = time.perf_counter()
        observation = await run_sized(lambda: self.step(action), cells)
        error = (observation.info or {}).get("error")
        observe_ws_step(
            observation.episode_id,
            action.operation,
            error["code"] if error else "ok",
            time.perf_counter() - start,
        )
        return observation

    # ── views ─────────────────────────────────────────────────────────────
    def _observation(self, result: StepResult, reward: float) -> CleaningObservation:
        return CleaningObservation.model_construct(
            **dict(result.observation),
            score=result.reward.total,
            score_components=result.reward,
            info=result.info,
            reward=reward,
            done=result.done,
            metadata={},
        )

    @property
    def state(self) -> CleaningState:
        if self.episode is None:
            return CleaningState()
        return CleaningState(**self.episode.state().model_dump())

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=ENV_NAME, description=DESCRIPTION, version=__version__, readme_content=readme()
        )

    def close(self) -> None:
        """Nothing to release: the episode lives in memory and goes with this instance."""

    # ── OpenEnv's task API (GET /{env}/splits, POST /{env}/tasks|num_tasks|task|task_range) ──
    # The generated families' instances, indexed per split: index i is family i % F with
    # seed i // F. Streams are unlimited; SPLIT_SIZES fixes how many the task API lists.
    def list_splits(self) -> list[str]:
        return list(SPLITS)

    def num_tasks(self, split: str) -> int:
        return SPLIT_SIZES[_split(split)] * len(FAMILIES)

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        if not 0 <= index < self.num_tasks(split):
            raise IndexError(index)
        family = list(FAMILIES)[index % len(FAMILIES)]
        seed = index // len(FAMILIES)
        spec, _, _ = instance(family, split, seed)
        return {"task_id": family, "split": split, "seed": seed, "description": spec.description}

    def get_task_range(
        self, split: str, start: int | None = None, stop: int | None = None
    ) -> list[dict[str, Any]]:
        indexes = range(self.num_tasks(split))[start:stop]  # at most MAX_TASK_RANGE of them
        return [self.get_task(split, i) for i in indexes[:MAX_TASK_RANGE]]

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        """Every listed instance of the split, without generating them (use get_task for
        an instance's rule card)."""
        families = list(FAMILIES)
        return [
            {"task_id": families[i % len(families)], "split": split, "seed": i // len(families)}
            for i in range(self.num_tasks(split))
        ]


def _split(split: str) -> str:
    if split not in SPLITS:  # an EnvError, so the app answers 422 rather than openenv's 500
        raise InvalidAction(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    return split
