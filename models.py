"""The pydantic models of the contract, importable from the project root (`from models import Action`)."""

from dataclean_env.schemas import (
    Action,
    DatasetInfo,
    EpisodeState,
    HistoryEntry,
    Observation,
    Reward,
    StepResult,
    TaskInfo,
)

__all__ = [
    "Action",
    "DatasetInfo",
    "EpisodeState",
    "HistoryEntry",
    "Observation",
    "Reward",
    "StepResult",
    "TaskInfo",
]
