"""Where the runner's episodes run: an `protocol.EnvProtocol` implementation, in this process
or on a server, seen as the loop reads it.

`Backend` is a thin adaptor, for two things the protocol does not say: the runner names an
episode by its `EpisodeKey` (task, seed, split), and its agents and log lines read a `Step`,
the observation as a plain dict (the REST observation's fields, nothing more) beside the
episode's score and the refused action's reason. `LocalBackend` wraps this process's
`DataCleaningEnv`, `RemoteBackend` a server's `RemoteDataCleaningEnv`: both answer the same
`StepResult`, so the loop, the agents and the log lines cannot tell them apart, and one
script evaluates a checkout or a deployed Space alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.engine.episode import Episode
from dataclean_env.engine.step_memory import StepMemory
from dataclean_env.in_process import DataCleaningEnv
from dataclean_env.schemas import StepResult
from dataclean_env.table.limits import EngineLimits
from dataclean_env.tasks import TaskRegistry

if TYPE_CHECKING:
    from dataclean_env.remote import RemoteDataCleaningEnv


@dataclass(frozen=True)
class Step:
    observation: dict[str, Any]
    score: float  # the episode's score after this step (the reward total)
    components: dict[str, float]
    done: bool
    error: str | None = None  # why the action was refused; the episode did not change
    repair: dict[str, float] | None = None  # real tables: exact precision, recall, F1
    labels_used: int | None = None  # labelled variants: rows `label` revealed so far


def seen(result: StepResult) -> Step:
    """`result` as the loop reads it. A blind episode's reward is None until its end; the
    loop and the log lines want a number, so it reads 0 until then."""
    error = result.info.get("error")
    return Step(
        observation=result.observation.model_dump(mode="json"),
        score=result.reward.total if result.reward is not None else 0.0,
        components=result.reward.model_dump() if result.reward is not None else {},
        done=result.done,
        error=error["detail"] if error else None,
        repair=result.info.get("repair"),
        labels_used=result.info.get("labels_used"),
    )


class Backend:
    """An environment playing the runner's episode keys."""

    def __init__(self, env: DataCleaningEnv | RemoteDataCleaningEnv):
        self.env = env  # each keeps the seed a reset without one uses

    def reset(self, key: EpisodeKey) -> Step:
        # The key's instance: its seed None is the task's default one, where the protocol's
        # None would replay the environment's last seed.
        self.env.seed = key.seed
        return seen(self.env.reset(None, self.episode_id(key), key.split, key.task_id))

    def step(self, action: dict[str, Any]) -> Step:
        return seen(self.env.step(action))

    def episode_id(self, key: EpisodeKey) -> str | None:
        """The id the episode of `key` is started under (None: the environment's choice)."""
        return None

    def rows_lost(self) -> int | None:
        """Gold rows missing from the table now; None where the harness cannot see it."""
        return None

    def close(self) -> None:
        self.env.close()


class LocalBackend(Backend):
    """The engine in this process (`DataCleaningEnv`), where gold is in reach."""

    env: DataCleaningEnv

    def __init__(
        self,
        registry: TaskRegistry,
        limits: EngineLimits | None = None,
        memory: StepMemory | None = None,
    ):
        # limits None: the engine's, time limit included; memory None: every step computed.
        first = registry.task_ids()[0]  # replaced by each key's task at its reset
        super().__init__(DataCleaningEnv(first, registry=registry, memory=memory, limits=limits))

    @property
    def episode(self) -> Episode | None:
        return self.env.episode

    def episode_id(self, key: EpisodeKey) -> str:
        return f"{key.task_id}-{key.split}-{key.seed}"

    def rows_lost(self) -> int | None:
        episode = self.env.episode
        if episode is None:
            raise RuntimeError("reset the environment before reading it")
        return episode.task.grader.gold_rows_missing(episode.snapshot)


class RemoteBackend(Backend):
    """A server's /ws endpoint (each connection is one episode; a reset starts the next)."""

    env: RemoteDataCleaningEnv

    def __init__(self, base_url: str, message_timeout_s: float = 60.0, home_of: str | None = None):
        # Imported here: openenv's client package pulls in gradio (~10 s), which in-process
        # runs should not pay for.
        from dataclean_env.remote import RemoteDataCleaningEnv

        super().__init__(
            RemoteDataCleaningEnv(base_url, message_timeout_s=message_timeout_s, home_of=home_of)
        )
