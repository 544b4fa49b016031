"""The run's closing summary, for stderr: per task and per family, the mean final score, the
mean cell-repair F1 where the task is a real table, and the mean labels used where the task
is a labelled variant. Stdout keeps only the graders' lines."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean

from dataclean_env.benchmark.results import EpisodeResult


def summary_lines(results: Sequence[EpisodeResult], family_of: Callable[[str], str]) -> list[str]:
    """One line for the run, then one per task and one per family, in first-played order."""
    if not results:
        return []
    tasks: dict[str, list[EpisodeResult]] = {}
    families: dict[str, list[EpisodeResult]] = {}
    for result in results:
        tasks.setdefault(result.task_id, []).append(result)
        families.setdefault(family_of(result.task_id), []).append(result)
    lines = [f"{len(results)} episodes, mean final score {fmean(r.score for r in results):.4f}"]
    lines += [_line("task", name, group) for name, group in tasks.items()]
    lines += [_line("family", name, group) for name, group in families.items()]
    return lines


def _line(kind: str, name: str, group: Sequence[EpisodeResult]) -> str:
    fields = [f"{kind}={name}", f"episodes={len(group)}"]
    fields.append(f"mean_score={fmean(r.score for r in group):.4f}")
    f1 = [r.repair["f1"] for r in group if r.repair is not None]
    if f1:
        fields.append(f"mean_f1={fmean(f1):.4f}")
    labels = [r.labels_used for r in group if r.labels_used is not None]
    if labels:
        fields.append(f"mean_labels_used={fmean(labels):.1f}")
    return " ".join(fields)
