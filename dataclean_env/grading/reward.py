"""The weighted reward: components against gold, minus penalties, clamped for the API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from dataclean_env.grading.abilities import GraderAbilities
from dataclean_env.grading.components import COMPONENTS, component_score
from dataclean_env.grading.gold_facts import GoldFacts, KeyedTable
from dataclean_env.grading.penalties import ActionRecord, penalty
from dataclean_env.table.snapshot import Snapshot

FLOOR, CEILING = 0.0001, 0.9999


def clamp(value: float) -> float:
    """Every reported field lies in [0.0001, 0.9999]. Graders keep full precision; the
    reward object the contract defines rounds to 4 places at the edge (`Episode`)."""
    return min(CEILING, max(FLOOR, value))


def reward_object(values: Mapping[str, float]) -> dict[str, float]:
    """The contract's reward object: each clamped value rounded to 4 places."""
    return {name: round(value, 4) for name, value in values.items()}


@dataclass(frozen=True)
class Grader(GraderAbilities):
    """Scores tables of one task. Built once per task; `baseline` holds the dirty errors."""

    facts: GoldFacts
    weights: Mapping[str, float]
    baseline: Mapping[str, int]

    @classmethod
    def for_task(
        cls, facts: GoldFacts, weights: Mapping[str, float], dirty: pd.DataFrame
    ) -> Grader:
        unknown = set(weights) - set(COMPONENTS)
        if unknown:
            raise ValueError(f"unknown scoring components {sorted(unknown)}")
        keyed = facts.keyed(Snapshot.of(dirty))
        baseline = {name: COMPONENTS[name](facts, keyed) for name in weights}
        return cls(facts, dict(weights), baseline)

    def components(self, snapshot: Snapshot) -> dict[str, float]:
        """Unclamped component scores in [0, 1] for the task's weighted components."""
        return self.graded(snapshot)[0]

    def graded(
        self, snapshot: Snapshot, previous: KeyedTable | None = None
    ) -> tuple[dict[str, float], KeyedTable]:
        """`components`, and the keyed table they were read from; `previous` is the keyed table of the
        episode's table before this step (see `GoldFacts.keyed`): the scores are the same."""
        keyed = self.facts.keyed(snapshot, previous)
        scores = {
            name: component_score(COMPONENTS[name](self.facts, keyed), self.baseline[name])
            for name in self.weights
        }
        return scores, keyed

    def gold_rows_missing(self, snapshot: Snapshot) -> int:
        """Gold rows (by key) the table no longer holds. For harnesses, never for agents."""
        return len(self.facts.gold_keys - self.facts.keyed(snapshot).first_row.keys())

    def reward(
        self, snapshot: Snapshot, history: Sequence[ActionRecord], max_steps: int
    ) -> dict[str, float]:
        """The reward object: every component (unscored ones at the floor), penalty, total."""
        return reward_object(self.combine(self.components(snapshot), history, max_steps))

    def combine(
        self, scores: Mapping[str, float], history: Sequence[ActionRecord], max_steps: int
    ) -> dict[str, float]:
        """Clamped values at full precision from component scores already computed."""
        charged = penalty(history, max_steps)
        total = sum(self.weights[name] * score for name, score in scores.items()) - charged
        reward = {name: clamp(scores.get(name, 0.0)) for name in COMPONENTS}
        reward["penalty"] = clamp(charged)
        reward["total"] = clamp(total)
        return {"total": reward.pop("total"), **reward}
