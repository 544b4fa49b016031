"""Error detection on real tables for the baseline report: each dirty/clean folder under a
directory becomes a detection task (`ClaimsFamily` with default kinds), and the reference
agents report the cells they find. The numbers are the literature's cell-level error
detection precision, recall and F1 (see README, "Detection, standardisation, audit")."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.agents.reference import NoOpAgent, OracleAgent
from dataclean_env.runner.backends import LocalEnvironment
from dataclean_env.runner.loop import run_episode
from dataclean_env.runner.selection import EpisodeKey
from dataclean_env.tasks.claims import ClaimsFamily
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


def default_folder(root: Path) -> Path | None:
    """The repository's real tables, else shared/real-tables beside the checkout."""
    for candidate in (root / "datasets/real", root.parent / "shared/real-tables"):
        if candidate.is_dir():
            return candidate
    return None


def detection_rows(parent: Path) -> list[DetectionRow]:
    registry = TaskRegistry([ClaimsFamily([parent], default_kinds=("detection",))])
    env = LocalEnvironment(registry)
    rows = []
    for spec in registry.specs():
        if spec.family != "custom" or not spec.task_id.endswith(SUFFIX):
            continue
        task = registry.make(spec.task_id)
        key = EpisodeKey(spec.task_id, None, "eval")
        for agent in (NoOpAgent(), HeuristicAgent(), OracleAgent(task.solution)):
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


def markdown(rows: Sequence[DetectionRow], parent: Path) -> str:
    if not rows:
        return ""
    lines = [
        "",
        "## Error detection on real tables",
        "",
        f"Every dirty/clean pair under `{parent.name}/` as a detection task: an error is a "
        "cell whose trimmed text differs from the clean file's. Precision = claimed cells "
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
