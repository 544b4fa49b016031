"""A grader's abilities beyond scoring a table, with the answers of a grader that lacks them.
`tasks.registry.TaskGrader` declares them, so an episode asks every grader alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dataclean_env.table.snapshot import Snapshot


class GraderAbilities:
    # Whether `label` may reveal this grader's clean rows (`clean_rows`).
    offers_labels = False

    def components(self, snapshot: Snapshot) -> dict[str, float]:
        raise NotImplementedError  # every grader scores its own components

    def graded(self, snapshot: Snapshot, previous: Any) -> tuple[dict[str, float], Any]:
        """`components`, and the keyed table they were read from (None: this grader keys
        none; `reward.Grader` keys the table again from `previous`, the one before the step)."""
        return self.components(snapshot), None

    def repair_report(self, scores: Mapping[str, float]) -> dict[str, float | int] | None:
        """Real tables: the exact cell-repair figures; None: not a cell-repair grader."""
        return None

    def clean_rows(self, keys: Sequence[Any]) -> dict[str, dict[str, str] | None]:
        """The clean row of each key; only a grader that `offers_labels` has them."""
        raise NotImplementedError
