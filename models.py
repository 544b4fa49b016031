"""The contract's models at the project root (`from models import Action`).

The REST models (`dataclean_env.schemas`) are imported at once; OpenEnv's typed Action,
Observation and State (`dataclean_env.models`: CleaningAction, CleaningObservation,
CleaningState) on first use, since importing `openenv` takes seconds.
"""

from typing import Any

from dataclean_env.schemas import (
    Action,
    DatasetInfo,
    EpisodeState,
    HistoryEntry,
    Observation,
    QueryResult,
    Reward,
    StepResult,
    TaskInfo,
)

OPENENV_TYPES = ("CleaningAction", "CleaningObservation", "CleaningState")

__all__ = [
    "Action",
    "DatasetInfo",
    "EpisodeState",
    "HistoryEntry",
    "Observation",
    "QueryResult",
    "Reward",
    "StepResult",
    "TaskInfo",
    *OPENENV_TYPES,
]


def __getattr__(name: str) -> Any:
    if name in OPENENV_TYPES:
        from dataclean_env import models

        return getattr(models, name)
    raise AttributeError(name)
