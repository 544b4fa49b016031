"""`EnvProtocol`: what every environment that plays one episode at a time answers.

Implemented by `in_process.DataCleaningEnv` (the engine in this process) and
`remote.RemoteDataCleaningEnv` (a server over `/ws`); the runner and the TRL environment
drive either through it, so one script plays a checkout or a deployed Space alike.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from dataclean_env.schemas import Action, EpisodeState, StepResult


@runtime_checkable
class EnvProtocol(Protocol):
    """One episode at a time: `reset` starts one, `step` plays it, `state` reads it.

    * `reset(seed, episode_id, split, task_id)` starts a fresh episode of `task_id` (None:
      the environment's current task, which a `task_id` given here replaces) and answers its
      opening. `seed` None replays the last reset's seed (or the environment's own); an
      unknown task or a bad seed, split or id raises the typed error (`errors.EnvError`).
    * `step(action)` takes one `Action` (or any envelope `Action` accepts, as a dict) and
      answers the episode after it. It never raises for a refused action (a malformed
      envelope, an unknown or disallowed operation, parameters the table cannot take, a
      step after the end): the answer is the unchanged episode, its table untouched and no
      step counted, with the reason in `observation.message` and `info["error"]`
      (`{"code", "detail"}`). It earns nothing; a refused operation counts against the
      refusal allowance (a malformed envelope and a step after the end do not). A step
      before any reset resets first.
    * `state()` is the episode's bookkeeping: id, task, seed, split, steps, the reward and
      the history of accepted operations.
    * `close()` releases what the environment holds (a connection); it plays no more.

    Same task, seed and actions give the same answers, byte for byte, from every
    implementation (`StepResult.json_bytes`). What an implementation returns is the
    caller's own: no later step changes it.
    """

    seed: int | None  # what a reset without a seed plays (None: the task's default instance)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
        task_id: str | None = None,
    ) -> StepResult: ...

    def step(self, action: Action | dict[str, Any]) -> StepResult: ...

    def state(self) -> EpisodeState: ...

    def close(self) -> None: ...
