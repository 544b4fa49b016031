"""`RemoteDataCleaningEnv(base_url)`: `protocol.EnvProtocol` on a server, over its `/ws`;
`AsyncRemoteDataCleaningEnv(base_url)`: the same calls for asyncio, awaited.

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


class _RemoteEpisodes:
    """What the sync and the asyncio client share: the reset's options, the action's check,
    and reading an answer back into the REST `StepResult`."""

    def __init__(
        self,
        base_url: str,
        task_id: str = "easy_dedup_rename",
        seed: int | None = None,
        message_timeout_s: float = 60.0,
        home_of: str | None = None,
        token: str | None = None,
        connect_timeout_s: float = 10.0,
    ):
        # Imported here: openenv's client package pulls in gradio (~10 s), which in-process
        # callers of this package should not pay for.
        from dataclean_env.client import DataCleaningClient

        self.task_id = task_id
        self.seed = seed
        # A submitter token raises a public server's session quota (docs/training.md).
        headers = {"Authorization": f"Bearer {token}"} if token else None
        client = DataCleaningClient(
            base_url=base_url,
            connect_timeout_s=connect_timeout_s,
            message_timeout_s=message_timeout_s,
            headers=headers,
        )
        if home_of is not None:  # behind the balancer, the socket opens on that episode's home
            client._ws_url = f"{client._ws_url}?{urlencode({'episode_id': home_of})}"
        self._async_client = client
        self._last: StepResult | None = None

    def _options(
        self, seed: int | None, episode_id: str | None, split: str, task_id: str | None
    ) -> dict[str, Any]:
        if task_id is not None:
            self.task_id = task_id
        if seed is not None:
            self.seed = seed
        options: dict[str, Any] = {"task_id": self.task_id, "split": split}
        if self.seed is not None:
            options["seed"] = self.seed
        if episode_id is not None:
            options["episode_id"] = episode_id
        return options

    @staticmethod
    def _checked(action: Action | dict[str, Any], last: StepResult) -> CleaningAction | StepResult:
        """The action to send, or (malformed) the engine's answer to it."""
        try:
            return CleaningAction.model_validate(
                action.model_dump() if isinstance(action, Action) else action
            )
        except ValidationError as error:
            return _refused(last, InvalidAction(_detail(error)))

    @staticmethod
    def _state(state: Any) -> EpisodeState:
        return EpisodeState.model_validate(state.model_dump(include=STATE_FIELDS))

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


class RemoteDataCleaningEnv(_RemoteEpisodes):
    def __init__(
        self,
        base_url: str,
        task_id: str = "easy_dedup_rename",
        seed: int | None = None,
        message_timeout_s: float = 60.0,
        home_of: str | None = None,
        token: str | None = None,
        connect_timeout_s: float = 10.0,
    ):
        super().__init__(
            base_url, task_id, seed, message_timeout_s, home_of, token, connect_timeout_s
        )
        self._client = self._async_client.sync()
        self._client.connect()

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
        task_id: str | None = None,
    ) -> StepResult:
        return self._answer(self._client.reset(**self._options(seed, episode_id, split, task_id)))

    def join(self, episode_id: str) -> StepResult:
        """Play an episode the server issued (a leaderboard run's), as it stands."""
        return self._answer(self._client.reset(episode_id=episode_id))

    def step(self, action: Action | dict[str, Any]) -> StepResult:
        checked = self._checked(action, self._last or self.reset())
        if isinstance(checked, StepResult):
            return checked
        return self._answer(self._client.step(checked))

    def state(self) -> EpisodeState:
        if self._last is None:
            self.reset()
        return self._state(self._client.state())

    def close(self) -> None:
        self._client.close()


class AsyncRemoteDataCleaningEnv(_RemoteEpisodes):
    """`RemoteDataCleaningEnv` for asyncio: the same calls, awaited, the same answers byte
    for byte; OpenEnv's `EnvClient` is async at heart, and this drives it directly.

        async with AsyncRemoteDataCleaningEnv("http://127.0.0.1:7860") as env:
            result = await env.reset(seed=0, task_id="crm")
            result = await env.step({"operation": "finish"})
    """

    async def __aenter__(self) -> AsyncRemoteDataCleaningEnv:
        await self._async_client.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
        task_id: str | None = None,
    ) -> StepResult:
        options = self._options(seed, episode_id, split, task_id)
        return self._answer(await self._async_client.reset(**options))

    async def join(self, episode_id: str) -> StepResult:
        """Play an episode the server issued (a leaderboard run's), as it stands."""
        return self._answer(await self._async_client.reset(episode_id=episode_id))

    async def step(self, action: Action | dict[str, Any]) -> StepResult:
        checked = self._checked(action, self._last or await self.reset())
        if isinstance(checked, StepResult):
            return checked
        return self._answer(await self._async_client.step(checked))

    async def state(self) -> EpisodeState:
        if self._last is None:
            await self.reset()
        return self._state(await self._async_client.state())

    async def close(self) -> None:
        await self._async_client.close()


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
