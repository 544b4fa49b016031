"""`RemoteDataCleaningEnv(base_url)`: `protocol.EnvProtocol` on a server, over its `/ws`.

One connection is one episode at a time; a reset starts the next on the same connection.
Each answer is read back into the REST `StepResult` the in-process `DataCleaningEnv` gives,
field for field, so a caller cannot tell the two apart (`tests/api/test_remote.py`).

A malformed envelope never reaches the server: OpenEnv's client checks the action against
`CleaningAction`, which parses it as the engine does. It is answered here as the engine
answers it (the last answer, with the error as message and in `info`, no query result),
and, as in the engine, it counts no refusal.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from pydantic import ValidationError

from dataclean_env.errors import InvalidAction, describe
from dataclean_env.models import CleaningAction
from dataclean_env.schemas import Action, EpisodeState, Observation, StepResult

OBSERVATION_FIELDS = frozenset(Observation.model_fields)
STATE_FIELDS = frozenset(EpisodeState.model_fields)


class RemoteDataCleaningEnv:
    def __init__(
        self,
        base_url: str,
        task_id: str = "easy_dedup_rename",
        seed: int | None = None,
        message_timeout_s: float = 60.0,
        home_of: str | None = None,
        token: str | None = None,
    ):
        # Imported here: openenv's client package pulls in gradio (~10 s), which in-process
        # callers of this package should not pay for.
        from dataclean_env.client import DataCleaningClient

        self.task_id = task_id
        self.seed = seed
        # A submitter token raises a public server's session quota (docs/training.md).
        headers = {"Authorization": f"Bearer {token}"} if token else None
        client = DataCleaningClient(
            base_url=base_url, message_timeout_s=message_timeout_s, headers=headers
        )
        if home_of is not None:  # behind the balancer, the socket opens on that episode's home
            client._ws_url = f"{client._ws_url}?{urlencode({'episode_id': home_of})}"
        self._client = client.sync()
        self._client.connect()
        self._last: StepResult | None = None

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
        task_id: str | None = None,
    ) -> StepResult:
        if task_id is not None:
            self.task_id = task_id
        if seed is not None:
            self.seed = seed
        options: dict[str, Any] = {"task_id": self.task_id, "split": split}
        if self.seed is not None:
            options["seed"] = self.seed
        if episode_id is not None:
            options["episode_id"] = episode_id
        return self._answer(self._client.reset(**options))

    def join(self, episode_id: str) -> StepResult:
        """Play an episode the server issued (a leaderboard run's), as it stands."""
        return self._answer(self._client.reset(episode_id=episode_id))

    def step(self, action: Action | dict[str, Any]) -> StepResult:
        last = self._last or self.reset()
        try:
            parsed = CleaningAction.model_validate(
                action.model_dump() if isinstance(action, Action) else action
            )
        except ValidationError as error:
            return _refused(last, InvalidAction(_detail(error)))
        return self._answer(self._client.step(parsed))

    def state(self) -> EpisodeState:
        if self._last is None:
            self.reset()
        state = self._client.state()
        return EpisodeState.model_validate(state.model_dump(include=STATE_FIELDS))

    def close(self) -> None:
        self._client.close()

    def _answer(self, result: Any) -> StepResult:
        observation = result.observation
        self._last = StepResult.model_validate(
            {
                "observation": observation.model_dump(mode="json", include=OBSERVATION_FIELDS),
                "reward": observation.score_components,
                "done": result.done,
                "info": observation.info,
            }
        )
        return self._last


def _detail(error: ValidationError) -> str:
    """The engine's words for the envelope (`CleaningAction` wraps `parse_action`'s)."""
    for problem in error.errors():
        if problem["type"] == "invalid_action":
            return str(problem["ctx"]["detail"])
    return describe(error, "action")


def _refused(last: StepResult, error: InvalidAction) -> StepResult:
    """`Episode.result(error)` for the episode `last` shows: nothing changed but the words."""
    answer = last.model_dump(mode="json")
    answer["observation"].update(message=f"Error ({error.code}): {error.detail}", query_result=None)
    answer["info"] = {**answer["info"], "error": {"code": error.code, "detail": error.detail}}
    return StepResult.model_validate(answer)
