"""`GRPOTrainer` with the `log_completions` workaround (imports TRL: training venv only).

TRL 1.16 crashes at its first log step when `log_completions=True` and the logged tool calls
all take no arguments (`finish()`, `validate_schema()`, `remove_duplicates()` here): see
`completion_log`. This subclass cleans the logged conversations just before TRL writes them.
"""

from __future__ import annotations

from typing import Any

from trl import GRPOTrainer

from dataclean_env.training.completion_log import parquet_safe


class DataCleaningGRPOTrainer(GRPOTrainer):  # type: ignore[misc]  # TRL: training venv only
    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        if self.log_completions:
            for key in ("prompt", "completion"):
                entries: Any = self._logs[key]
                cleaned = [parquet_safe(entry) for entry in entries]
                entries.clear()
                entries.extend(cleaned)
        super().log(logs, start_time)
