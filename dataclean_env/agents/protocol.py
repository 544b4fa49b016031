"""What an agent is: anything with a `name` and `act(observation) -> action dict`, made once
per episode from the episode's key (task, seed, split) by an `AgentFactory`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

FINISH = {"operation": "finish", "parameters": {}}


@dataclass(frozen=True)
class EpisodeKey:
    task_id: str
    seed: int | None
    split: str


class Agent(Protocol):
    name: str

    def act(self, observation: dict[str, Any]) -> dict[str, Any]: ...


AgentFactory = Callable[[EpisodeKey], Agent]
