"""Error detection on real tables for the baseline report: every custom or real folder whose
task.json lists the detection kind (datasets/rayyan does), or every dirty/clean folder under
a directory given on the command line, and the reference agents report the cells they find. The numbers are the literature's cell-level error
detection precision, recall and F1 (see README, "Detection, standardisation, audit")."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.agents.reference import NoOpAgent, OracleAgent
from dataclean_env.grading.claim_graders import DetectionGrader
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.runner.loop import run_episode
from dataclean_env.tasks.claim_families import ClaimsFamily
from dataclean_env.tasks.registry import TaskRegistry

SUFFIX = "_detection"


@dataclass(frozen=True)
class DetectionRow:
    table: str
    agent: str
    true_errors: int
    precision: float
    recall: float
    f1: float


def folder_registry(parent: Path) -> TaskRegistry:
    """A detection task for every dirty/clean folder under `parent`."""
    return TaskRegistry([ClaimsFamily([parent], default_kinds=("detection",))])


def detection_rows(registry: TaskRegistry) -> list[DetectionRow]:
    env = LocalBackend(registry)
    rows = []
    for spec in registry.specs():
        if spec.family != "custom" or spec.kind != "detection":
            continue
        task = registry.make(spec.task_id)
        if not isinstance(task.grader, DetectionGrader):
            raise TypeError(f"{spec.task_id}: a detection task without a DetectionGrader")
        key = EpisodeKey(spec.task_id, None, "eval")
        for agent in (NoOpAgent(), HeuristicAgent(), OracleAgent(task.reference_plan)):
            found = run_episode(env, agent, key, out=io.StringIO()).components
            rows.append(
                DetectionRow(
                    spec.task_id.removesuffix(SUFFIX),
                    agent.name,
                    task.grader.truth.count,
                    _plain(found["detection_precision"]),
                    _plain(found["detection_recall"]),
                    _plain(found["detection_f1"]),
                )
            )
    return rows


def _plain(value: float) -> float:
    """The reward's clamp undone at its ends, for a table of plain shares."""
    return 1.0 if value == 0.9999 else 0.0 if value == 0.0001 else value


def markdown(rows: Sequence[DetectionRow]) -> str:
    if not rows:
        return ""
    lines = [
        "",
        "## Error detection on real tables",
        "",
        "Each real table as a detection task (`<table>_detection`): an error is a cell whose "
        "trimmed text differs from the clean file's. Precision = claimed cells "
        "that are errors / cells claimed; recall = errors claimed / errors; F1 their "
        "harmonic mean (error types not counted), as in the error-detection literature.",
        "",
        "| table | agent | errors | precision | recall | F1 |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.table} | {row.agent} | {row.true_errors} | {row.precision:.4f} | "
            f"{row.recall:.4f} | {row.f1:.4f} |"
        )
    return "\n".join(lines) + "\n"
