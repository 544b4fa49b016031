"""The OpenEnv `Environment`: one instance per WebSocket session, each its own episode.

## Description
An agent cleans a dirty table one operation (or one `program` of operations) per step and is
scored cell by cell against a hidden gold table. Tasks: four fixed tasks, seeded generated
families in train/eval/test splits, and custom dirty/clean CSV folders.

## Action space
`{"operation": name, "parameters": {...}}` (also `{"action": {...}}`, `{"name", "params"}`,
`{"action_type"}`). Each operation has a strict parameter model; `/schema` lists them all.
A refused action (unknown operation, bad parameters, an operation the table cannot take)
changes nothing but the refusal count.

## Observation space
| field | meaning |
|---|---|
| episode_id, task_id | which episode and task |
| step, steps_remaining | accepted steps so far and left |
| columns, shape, dtypes, missing_values, duplicate_count, dataset_info | the table's state |
| sample_rows, sample_offset | the `show_rows` window (5 rows at first, ≤ 50), missing as "NULL" |
| available_operations, task_description | what may be done, and the task's rule card |
| message | what the last step did, or why it was refused |
| score, score_components | the episode score (full precision) and the reward object |
| info | step info: `error`, `exact`, `terminated`, `truncated`, `end_reason`, `refusals` |

## Rewards
`reward_mode="delta"` (default): the change in score the step made, so the sum of an
episode's rewards is final minus initial score. `"absolute"`: the score itself (for clients
that read it, not for summing). `"hidden"`: null until the episode ends, whose step shows the
final score. A refused action earns 0 (null while hidden). The score is a
weighted sum of components computed against gold, minus order/repeat penalties on the fixed
tasks, clamped to [0.0001, 0.9999]; doing nothing earns about nothing and no damaging step
raises it.

## Starting state
The task's dirty table (rows shuffled by `seed` on fixed tasks; a seeded instance of the
split on generated families), step 0.

## Episode end
Terminated: the agent's `finish`. Truncated: the step budget (`max_steps` accepted steps)
or the refusal allowance (`max_steps` refused actions) is used up. `info` tells them apart;
any step after the end is refused with EPISODE_FINISHED.

## Arguments (reset options)
`task_id` (default: the first task), `seed`, `split` ("train", "eval", "test"),
`episode_id`, `reward_mode` ("delta", "absolute", "hidden").

## Version history
* 0.3: refusals earn 0 and are bounded; scores at full precision; termination and
  truncation told apart in `info`; one door for every client.
* 0.2: generated families, custom datasets, OpenEnv /ws, the runner.
* 0.1: the four fixed tasks over REST.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from dataclean_env import ENV_NAME, __version__
from dataclean_env.engine.doors import attempt, start_episode
from dataclean_env.engine.episode import Episode
from dataclean_env.engine.episode_ids import check_client_id
from dataclean_env.engine.parsing import parse_reset_options
from dataclean_env.engine.step_memory import StepMemory
from dataclean_env.errors import EnvError, InvalidAction
from dataclean_env.generation import SPLITS
from dataclean_env.models import CleaningAction, CleaningObservation, CleaningState
from dataclean_env.openenv_light import skip_package_inits
from dataclean_env.rate_limit import CALLER
from dataclean_env.schemas import Action, StepResult, graded
from dataclean_env.server.http.guards import keep_code
from dataclean_env.server.http.routes.episodes import is_slow, run_sized
from dataclean_env.server.metrics import observe_ws_step
from dataclean_env.server.store.reward_visibility import REWARD_MODES, RewardMode, blind_view
from dataclean_env.settings import PROJECT_ROOT
from dataclean_env.tasks import TaskRegistry, default_registry
from dataclean_env.tasks.generated import FAMILIES, instance

skip_package_inits()  # see openenv_light: the interfaces alone, not gradio

from openenv.core.env_server.interfaces import Environment  # noqa: E402
from openenv.core.env_server.types import EnvironmentMetadata  # noqa: E402

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
    """The server side of OpenEnv's contract (OpenEnv names it `<Name>Environment`): one
    instance per /ws or MCP session, answering OpenEnv's models (`CleaningObservation`).
    A Python caller plays the in-process `DataCleaningEnv` instead (`in_process.py`)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        registry: TaskRegistry | None = None,
        issued: Callable[[str, str | None], Episode | None] | None = None,
        memory: StepMemory | None = None,
        copies: bool = True,
    ):
        super().__init__()
        # Cheap on purpose: OpenEnv builds a throwaway instance for /metadata and task calls.
        self.registry = registry or default_registry()
        self.issued = issued  # the server's issued episodes, by id (None: no leaderboard)
        self.memory = memory  # the server's step memory (None: every step computed)
        # Observations are copies unless the caller serialises them at once (the server):
        # a copy costs ~100 µs a step, as much as a small step itself.
        self.copies = copies
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
        if options:
            raise InvalidAction(
                f"unknown reset options {sorted(options)}; "
                "accepted: task_id, seed, split, episode_id, reward_mode"
            )
        if reward_mode not in REWARD_MODES:
            raise InvalidAction("reward_mode must be 'delta', 'absolute' or 'hidden'")
        request = parse_reset_options(
            {"seed": seed, "episode_id": episode_id, "task_id": task_id, "split": split}
        )
        # A first join builds the episode under the caller's quota (CALLER: the socket's or
        # request's client), as a reset would; refused (no room), the episode stays unjoined.
        joined = (
            self.issued(request.episode_id, CALLER.get())
            if self.issued and request.episode_id
            else None
        )
        if joined is not None:  # a leaderboard episode: played as it stands, blind
            self.episode, self.reward_mode = joined, "hidden"
            with joined.lock:
                return self._observation(joined.result(), 0.0)
        if request.episode_id is not None:
            check_client_id(request.episode_id)  # as every door: "dce:" ids are the server's
        task = request.task_id or self.registry.task_ids()[0]
        self.episode = start_episode(
            self.registry, task, request.seed, request.split, request.episode_id, memory=self.memory
        )
        self.episode.blind = reward_mode == "hidden"
        self.reward_mode = reward_mode
        self._last_score = self.episode.score
        first = self._last_score if reward_mode == "absolute" else 0.0
        return self._observation(self.episode.result(), first)

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, **options: Any
    ) -> CleaningObservation:
        task_id = options.get("task_id") or self.registry.task_ids()[0]
        known = isinstance(task_id, str) and task_id in self.registry.task_ids()
        cells = self.registry.spec(task_id).cells if known else 0  # unknown: reset() refuses it
        # A reset naming an issued episode joins it: it may build it or wait for another
        # client's step on it, so it runs in a thread, never on the event loop.
        joins = bool(episode_id) and self.issued is not None
        try:
            return await run_sized(
                lambda: self.reset(seed, episode_id, **options), cells, waits=joins
            )
        except EnvError as error:
            keep_code(error)  # a misdirected join's frame says MISDIRECTED, as REST does
            raise

    # ── step ──────────────────────────────────────────────────────────────
    def step(
        self, action: CleaningAction, timeout_s: float | None = None, **kwargs: Any
    ) -> CleaningObservation:
        if self.episode is None:
            self.reset()
        episode = self.episode
        assert episode is not None
        # CleaningAction validated the envelope already; do not validate it twice.
        result = attempt(
            episode,
            Action.model_construct(operation=action.operation, parameters=action.parameters),
        )
        score = episode.score
        if self.reward_mode == "hidden":  # nothing until the end, then the final score
            reward = score if result.done and "error" not in result.info else 0.0
        elif "error" in result.info:  # refused: no reward in any mode, so stalling earns nothing
            reward = 0.0
        elif self.reward_mode == "absolute":
            reward = score
        else:
            reward = score - self._last_score
        self._last_score = score
        return self._observation(result, reward)

    async def step_async(
        self, action: CleaningAction, timeout_s: float | None = None, **kwargs: Any
    ) -> CleaningObservation:
        cells = self.episode.cells if self.episode is not None else 0
        start = time.perf_counter()
        slow = is_slow(action.operation)
        waits = self.episode is not None and self.episode.step_waits  # a leaderboard episode
        observation = await run_sized(lambda: self.step(action), cells, slow, waits, self.episode)
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
        # The engine's lists and dicts are shared with other episodes (their opening, the
        # step memory): a Python caller gets copies (the types kept, so the same bytes).
        fields = dict(result.observation)
        if self.copies:
            fields = copy.deepcopy(fields)
        observation = CleaningObservation.model_construct(
            **fields,
            score=self.episode.score if self.episode is not None else graded(result).total,
            score_components=result.reward,
            info=result.info,
            reward=reward,
            done=result.done,
            metadata={},
        )
        return blind_view(self.episode, observation)

    @property
    def state(self) -> CleaningState:
        if self.episode is None:
            return CleaningState()
        # OpenEnv reads this on the event loop: it must not wait for a step that another
        # session joined to the same (issued) episode is running.
        episode = self.episode
        state = episode.read_committed(lambda: blind_view(episode, episode.state()).model_dump())
        return CleaningState(**state)

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
