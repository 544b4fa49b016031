"""Typed OpenEnv client: `DataCleaningClient(base_url=...)`, async or `.sync()`, over /ws.

    from dataclean_env.client import DataCleaningClient, CleaningAction

    with DataCleaningClient(base_url="http://127.0.0.1:7860").sync() as env:
        result = env.reset(task_id="hard_full_pipeline", seed=0)
        result = env.step(CleaningAction(operation="remove_duplicates"))
        print(result.reward, result.observation.score, result.done)

Each client (each WebSocket connection) is its own episode on the server.
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from dataclean_env.models import CleaningAction, CleaningObservation, CleaningState

__all__ = ["CleaningAction", "CleaningObservation", "CleaningState", "DataCleaningClient"]


class DataCleaningClient(EnvClient[CleaningAction, CleaningObservation, CleaningState]):
    def _step_payload(self, action: CleaningAction | dict[str, Any]) -> dict[str, Any]:
        # CleaningAction derives from openenv's untyped Action, so the checker cannot rule
        # out that it is a dict: name the parsed action apart instead of narrowing.
        parsed = (
            action if isinstance(action, CleaningAction) else CleaningAction.model_validate(action)
        )
        return {"operation": parsed.operation, "parameters": parsed.parameters}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CleaningObservation]:
        observation = CleaningObservation.model_validate(
            {
                **payload.get("observation", {}),
                "reward": payload.get("reward"),
                "done": payload.get("done", False),
                "metadata": payload.get("metadata") or {},
            }
        )
        return StepResult(
            observation=observation,
            reward=payload.get("reward"),
            done=payload.get("done", False),
            metadata=payload.get("metadata"),
        )

    def _parse_state(self, payload: dict[str, Any]) -> CleaningState:
        return CleaningState.model_validate(payload)
