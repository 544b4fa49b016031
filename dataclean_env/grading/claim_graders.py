"""Graders of the task kinds that are scored on what the agent claims.

* `DetectionGrader`: cells reported with `report_errors` against the truth (cell-level
  precision, recall, F1; a right cell with a wrong or missing type earns half), scaled by
  how far precision beats chance (grader-3), so reporting every cell scores 0.
* `StandardisationGrader`: per column, the gain in cells equal to gold.
* `AuditGrader`: the four phases audit / identify / fix / validate, weighted
  0.15 / 0.30 / 0.40 / 0.15; the audit phase is the informedness of the claimed
  categories (grader-3), so claiming all seven, like claiming none, scores 0.

Claims live in the episode's history (the accepted actions and their parameters), so the
graders read them from there; the table only matters to standardisation and to the fix
phase. Detection and audit scores are revealed when the episode ends (finish, validate or
the step budget): a score shown after every report would let an agent probe cells one at a
time and learn the truth from the reward.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dataclean_env.grading.abilities import GraderAbilities
from dataclean_env.grading.gold_facts import all_present, key_text
from dataclean_env.grading.penalties import ActionRecord
from dataclean_env.grading.reward import clamp
from dataclean_env.grading.truth import ERROR_TYPES, Truth, Unit, error_type
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import MISSING, Kind, cells_equal, kind_of

TYPE_CREDIT = 0.5  # a right cell whose type is wrong or not given
REPORTING = ("report_errors", "identify")
ENDING = ("finish", "validate")
AUDIT_WEIGHTS = {
    "audit_score": 0.15,
    "identify_score": 0.30,
    "fix_score": 0.40,
    "validate_score": 0.15,
}


@dataclass(frozen=True)
class DetectionScores:
    precision: float  # untyped, as in the error-detection literature
    recall: float
    f1: float
    type_accuracy: float  # of the right cells reported, the share with the right type
    beyond_chance: float  # how far precision beats a blind guess's (0: no better; 1: all right)
    score: float  # typed F1 x beyond_chance: what the reward uses

    def as_dict(self) -> dict[str, float]:
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "type_accuracy": self.type_accuracy,
            "beyond_chance": self.beyond_chance,
            "score": self.score,
        }


def detection_scores(claims: Mapping[Unit, str | None], truth: Truth) -> DetectionScores:
    """Cell-level scores of `claims` (unit -> claimed type or None) against `truth`.

    precision = right units / units reported; recall = right units / true units;
    F1 = 2 x right / (reported + true). The score counts a right unit as 1 when its type is
    right and `TYPE_CREDIT` otherwise, and is scaled by `beyond_chance`."""
    reported, true = len(claims), truth.count
    hits = [unit for unit in claims if unit in truth.errors]
    typed_right = sum(1 for unit in hits if claims[unit] == truth.errors[unit])
    credit = typed_right + TYPE_CREDIT * (len(hits) - typed_right)
    if reported + true == 0:  # nothing wrong and nothing claimed: a perfect report
        return DetectionScores(1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    precision = len(hits) / reported if reported else 0.0
    factor = beyond_chance(precision, true, truth.units)
    return DetectionScores(
        precision=precision,
        recall=len(hits) / true if true else 0.0,
        f1=2 * len(hits) / (reported + true),
        type_accuracy=typed_right / len(hits) if hits else 0.0,
        beyond_chance=factor,
        score=2 * credit / (reported + true) * factor,
    )


def beyond_chance(precision: float, true: int, units: int) -> float:
    """(precision - chance) / (1 - chance), floored at 0, where chance = true / units is the
    precision of cells picked blindly: reporting every cell (or a random share of them)
    earns nothing, whatever the table's error rate. A table whose every unit is wrong
    leaves no chance to beat: 1."""
    chance = true / units if units else 1.0
    if chance >= 1.0:
        return 1.0
    return max(0.0, (precision - chance) / (1.0 - chance))


def claimed_units(
    history: Sequence[ActionRecord], truth: Truth, operations: Iterable[str] = REPORTING
) -> dict[Unit, str | None]:
    """Every unit reported so far with its last claimed type (reports accumulate)."""
    names = frozenset(operations)
    claims: dict[Unit, str | None] = {}
    for record in history:
        if record.operation in names:
            for cell in record.parameters.get("cells", ()):
                unit = truth.unit_of(cell["row_id"], cell.get("column"))
                claims[unit] = error_type(cell.get("error_type"))
    return claims


def ended(history: Sequence[ActionRecord], max_steps: int) -> bool:
    return bool(history) and (history[-1].operation in ENDING or len(history) >= max_steps)


def _lost_rows(truth: Truth, snapshot: Snapshot) -> int:
    if truth.key not in snapshot.values:
        return len(truth.gold)
    present = {key_text(v) for v in snapshot.values[truth.key]}
    return sum(1 for key in truth.gold if key not in present)


@dataclass(frozen=True)
class DetectionGrader(GraderAbilities):
    """Reward: {total, detection_precision, detection_recall, detection_f1, type_accuracy,
    penalty}; total is the typed F1 scaled by how far precision beats chance, penalty what
    that scaling took (1 - beyond_chance), and everything stays at the floor until the
    episode ends."""

    truth: Truth

    def components(self, snapshot: Snapshot) -> dict[str, float]:
        return {}  # the table is not what is graded

    def gold_rows_missing(self, snapshot: Snapshot) -> int:
        return _lost_rows(self.truth, snapshot)

    def scores(self, history: Sequence[ActionRecord]) -> DetectionScores:
        return detection_scores(claimed_units(history, self.truth), self.truth)

    def combine(
        self, scores: Mapping[str, float], history: Sequence[ActionRecord], max_steps: int
    ) -> dict[str, float]:
        if not ended(history, max_steps):
            return _floor(
                "detection_precision", "detection_recall", "detection_f1", "type_accuracy"
            )
        found = self.scores(history)
        return {
            "total": clamp(found.score),
            "detection_precision": clamp(found.precision),
            "detection_recall": clamp(found.recall),
            "detection_f1": clamp(found.f1),
            "type_accuracy": clamp(found.type_accuracy),
            "penalty": clamp(1.0 - found.beyond_chance),
        }


def _floor(*names: str) -> dict[str, float]:
    return {"total": clamp(0.0), **{n: clamp(0.0) for n in names}, "penalty": clamp(0.0)}


@dataclass(frozen=True)
class StandardisationGrader(GraderAbilities):
    """Per column, the gain in cells equal to gold: (right now - right in dirty) / (wrong
    in dirty), between -1 and 1. The total is the mean gain over the columns that had
    something to standardise, less what was broken in columns that were already right;
    doing nothing scores 0 and a perfect transform 1. Reward: {total,
    standardisation_score, cell_share, penalty}; cell_share is the plain share of cells
    equal to gold."""

    key: str
    kinds: Mapping[str, Kind]
    gold: Mapping[str, Mapping[str, Any]]  # column -> row id -> gold value
    right_in_dirty: Mapping[str, int]

    @classmethod
    def for_task(cls, dirty: pd.DataFrame, gold: pd.DataFrame, key: str) -> StandardisationGrader:
        kinds = {c: kind_of(gold[c].dtype) for c in gold.columns if c != key}
        keys = [key_text(v) for v in gold[key]]
        if not all_present(keys):  # the task's Truth has already refused such a table
            raise ValueError(f"the key column {key!r} of the clean table must be complete")
        snapshot = Snapshot.of(gold)
        values = {c: dict(zip(keys, snapshot.values[c], strict=True)) for c in kinds}
        grader = cls(key, kinds, values, {})
        return cls(key, kinds, values, grader._right(Snapshot.of(dirty)))

    def _right(self, snapshot: Snapshot) -> dict[str, int]:
        if self.key not in snapshot.values:
            return dict.fromkeys(self.kinds, 0)
        first: dict[str, int] = {}
        for position, value in enumerate(snapshot.values[self.key]):
            first.setdefault(key_text(value) or "", position)
        right = {}
        for column, kind in self.kinds.items():
            values = snapshot.values.get(column)
            count = 0
            for key, gold in self.gold[column].items():
                row = first.get(key)
                if values is None or row is None:
                    continue
                cell = values[row]
                if gold is MISSING:
                    count += cell is MISSING
                elif cell is not MISSING and cells_equal(cell, gold, kind):
                    count += 1
            right[column] = count
        return right

    def components(self, snapshot: Snapshot) -> dict[str, float]:
        right = self._right(snapshot)
        rows = len(next(iter(self.gold.values()), {}))
        gains, broken = [], 0.0
        for column, now in right.items():
            before = self.right_in_dirty[column]
            if before < rows:
                gains.append((now - before) / (rows - before))
            else:
                broken += (before - now) / max(1, rows)
        gain = (sum(gains) - broken) / max(1, len(gains))
        share = sum(right.values()) / max(1, rows * len(right))
        return {"standardisation_score": max(-1.0, gain), "cell_share": share}

    def gold_rows_missing(self, snapshot: Snapshot) -> int:
        present = {key_text(v) for v in snapshot.values.get(self.key, [])}
        rows = next(iter(self.gold.values()), {})
        return sum(1 for key in rows if key not in present)

    def combine(
        self, scores: Mapping[str, float], history: Sequence[ActionRecord], max_steps: int
    ) -> dict[str, float]:
        return {
            "total": clamp(scores["standardisation_score"]),
            **{name: clamp(value) for name, value in scores.items()},
            "penalty": clamp(0.0),
        }


def category_scores(claimed: Iterable[str | None], present: frozenset[str]) -> float:
    """Informedness of the claimed error categories against those present, over the
    `ERROR_TYPES`: the share of present ones claimed less the share of absent ones claimed,
    from -1 to 1. Claiming all and claiming none both score 0 (all scores 1 only when all
    are present); with no category present there is nothing to find (true-positive rate
    1), with all present nothing to claim wrongly (false-positive rate 0)."""
    named = {c for c in claimed if c is not None}
    absent = frozenset(ERROR_TYPES) - present
    found = len(named & present) / len(present) if present else 1.0
    false_alarms = len(named & absent) / len(absent) if absent else 0.0
    return found - false_alarms


def count_score(claimed: int, true: int) -> float:
    """1 when the claimed number equals the true one, falling linearly with the error."""
    return max(0.0, 1.0 - abs(claimed - true) / max(claimed, true, 1))


@dataclass(frozen=True)
class AuditGrader(GraderAbilities):
    """The four-phase audit. audit: informedness of the claimed categories; identify: the
    detection score above; fix: the net share of errors the fixes removed, (errors in dirty
    - errors now) / errors in dirty, so a fix that breaks right cells goes below 0 (a lost
    gold row is every one of its cells wrong, `Truth.remaining`); validate: the claimed number of errors remaining against the true number. Free text (the summary,
    the report) earns nothing. Reward: {total, audit_score, identify_score, fix_score,
    validate_score, penalty}, all at the floor until the episode ends."""

    truth: Truth

    def components(self, snapshot: Snapshot) -> dict[str, float]:
        remaining = self.truth.remaining(snapshot)
        before = self.truth.count
        fix = (before - remaining) / before if before else (0.0 if remaining else 1.0)
        return {"fix": max(-1.0, fix), "remaining": float(remaining)}

    def gold_rows_missing(self, snapshot: Snapshot) -> int:
        return _lost_rows(self.truth, snapshot)

    def phase_scores(
        self, scores: Mapping[str, float], history: Sequence[ActionRecord]
    ) -> dict[str, float]:
        done = {record.operation for record in history}
        audits = [r for r in history if r.operation == "audit"]
        categories = (
            (error_type(c) for c in audits[-1].parameters.get("categories", ())) if audits else ()
        )
        validated = [r for r in history if r.operation == "validate"]
        identify = detection_scores(claimed_units(history, self.truth, ("identify",)), self.truth)
        return {
            "audit_score": category_scores(categories, self.truth.categories()) if audits else 0.0,
            "identify_score": identify.score if "identify" in done else 0.0,
            "fix_score": scores["fix"] if "fix" in done else 0.0,
            "validate_score": (
                count_score(validated[-1].parameters["issues_remaining"], int(scores["remaining"]))
                if validated
                else 0.0
            ),
        }

    def combine(
        self, scores: Mapping[str, float], history: Sequence[ActionRecord], max_steps: int
    ) -> dict[str, float]:
        if not ended(history, max_steps):
            return _floor(*AUDIT_WEIGHTS)
        phases = self.phase_scores(scores, history)
        total = sum(AUDIT_WEIGHTS[name] * value for name, value in phases.items())
        return {
            "total": clamp(total),
            **{name: clamp(value) for name, value in phases.items()},
            "penalty": clamp(0.0),
        }
