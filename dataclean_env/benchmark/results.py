"""One episode's outcome, and the JSON-lines file a run writes (one line per episode)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any


@dataclass(frozen=True)
class EpisodeResult:
    task_id: str
    split: str
    seed: int | None
    model: str
    steps: int  # actions the agent took, refused and unreadable ones included
    score: float  # the episode's final score (not a mean of step rewards)
    success: bool
    components: dict[str, float]
    invalid_actions: int  # refused by the environment, or replies that held no action
    rows_lost: int | None  # gold rows missing at the end (in-process runs only)
    wall_time_s: float
    error: str | None = None  # the exception that ended the episode early, if one did
    # Real tables: the final cell-repair precision, recall, F1 and cells changed (exact).
    repair: dict[str, float] | None = None
    # Labelled variants of real tables: the rows `label` revealed (None where it has no budget).
    labels_used: int | None = None

    def record(self) -> dict[str, Any]:
        return asdict(self)


class ResultsFile:
    """Appends each result as it arrives, so an interrupted run keeps what it finished."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: IO[str] = open(path, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, result: EpisodeResult) -> None:
        self._handle.write(json.dumps(result.record(), sort_keys=True) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def read_results(path: Path) -> list[EpisodeResult]:
    with open(path, encoding="utf-8") as handle:
        return [EpisodeResult(**json.loads(line)) for line in handle if line.strip()]
