"""docs/BASELINES.md and its plot, from the per-(agent, family) summaries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dataclean_env.benchmark.stats import CONFIDENCE, RESAMPLES, Summary

# How the runner measures: in-process, each step's figures visible (the in-process default).
MEASURED_IN = "visible"


@dataclass(frozen=True)
class AgentNote:
    """A row of the report's agent table: which agent, what it is, its settings."""

    label: str  # the `model=` name in the logs and results
    what: str
    settings: str = "-"


def markdown(
    summaries: Sequence[Summary],
    agents: Sequence[AgentNote],
    run: str,
    plot_name: str,
    by_difficulty: Sequence[Summary] = (),
    versions: str = "",
    suite: Sequence[str] = (),
    measured_elsewhere: Sequence[str] = (),
) -> str:
    """The report; `measured_elsewhere` holds sections of agents played outside this run
    (the Raha + Baran section, `raha_baran.py`), placed after the real tables' figures."""
    lines = [
        "# Baselines",
        "",
        "Mean final score of each agent per task family, with "
        f"{CONFIDENCE:.0%} bootstrap intervals (percentile method, {RESAMPLES:,} resamples "
        "of the episodes, numpy seed 0). Written by `scripts/baselines.py`; do not edit by "
        "hand.",
        "",
        run,
        "",
        *([versions, ""] if versions else []),
        "## Agents",
        "",
        "| agent | what it is | settings |",
        "|---|---|---|",
        *(f"| `{a.label}` | {a.what} | {a.settings} |" for a in agents),
        "",
        *suite,
        "## Results",
        "",
        "| family | agent | episodes | mean score | 95% interval | invalid actions "
        "| exact match | rows lost |",
        "|---|---|---:|---:|---|---:|---:|---:|",
        *(_row(s) for s in summaries),
        "",
        *_repair_table(summaries),
        *measured_elsewhere,
        f"![Mean final score by family and agent]({plot_name})",
        "",
        "* **score**: the episode's final score (the reward total when it ended), in "
        "[0.0001, 0.9999]; `fixed` pools the four fixed tasks, every other family is one "
        "generated family or one real table (scored by its cell-repair F1).",
        "* **invalid actions**: the share of the agent's actions that the environment refused "
        "(or, for an LLM, replies that held no readable action even after one retry).",
        "* **exact match**: the share of episodes ending at 0.9999, the full table equal to "
        "gold (and, on the fixed tasks, no penalty).",
        "* **rows lost**: the mean number of gold rows (by key) missing from the final table.",
        "",
        *_difficulty_section(by_difficulty),
    ]
    return "\n".join(lines)


def _difficulty_section(summaries: Sequence[Summary]) -> list[str]:
    """Generated instances by split and difficulty; a summary's `family` holds
    "split / family / difficulty" ("all" pools the generated families)."""
    if not summaries:
        return []
    rows = []
    for s in summaries:
        split, family, difficulty = s.family.split(" / ")
        rows.append(
            f"| {split} | {family} | {difficulty} | `{s.agent}` | {s.episodes} "
            f"| {s.mean_score:.4f} | [{s.ci_low:.4f}, {s.ci_high:.4f}] | {s.exact_rate:.1%} |"
        )
    return [
        "## Generated instances by difficulty",
        "",
        "Each generated instance has its own difficulty (easy, medium, hard): easy cards use "
        "the plain phrasings, hard ones mostly other phrasings and leave some rules to the "
        "data. `all` pools the six generated families.",
        "",
        "| split | family | difficulty | agent | episodes | mean score | 95% interval "
        "| exact match |",
        "|---|---|---|---|---:|---:|---|---:|",
        *rows,
        "",
    ]


def _repair_table(summaries: Sequence[Summary]) -> list[str]:
    """Real tables: the literature's cell-repair figures beside the score (which is F1)."""
    real = [s for s in summaries if s.repair is not None]
    if not real:
        return []
    return [
        "### Real tables: cell repair",
        "",
        "Precision = cells changed to the clean value / cells changed; recall = cells "
        "changed to the clean value / cells that were wrong; F1 their harmonic mean (the "
        "literature's figures; the score, in the table above, is net repair: (repaired - "
        "wrong changes) / cells that were wrong, at least 0). Means over episodes; 0 where nothing was changed. The oracle replays the "
        "plan built from the table's dirty/clean pair when the task loads (a `map` per "
        "column where a dirty value has one clean value, `set_cell` for the rest, batched "
        "in `program`s). The mode column says how each row was measured: `visible` is "
        "in-process with the repair figures visible after every step (none of these agents "
        "reads them, so their numbers are those of the evaluation mode); report a real "
        "agent's results in the evaluation mode, `reward_mode=hidden`, where no door shows a "
        "repair figure before the episode ends.",
        "",
        "| task | agent | mode | episodes | F1 | 95% interval | precision | recall "
        "| cells changed |",
        "|---|---|---|---:|---:|---|---:|---:|---:|",
        *(
            f"| {s.family} | `{s.agent}` | {MEASURED_IN} | {s.episodes} | {s.repair.f1:.4f} "
            f"| [{s.repair.f1_low:.4f}, {s.repair.f1_high:.4f}] | {s.repair.precision:.4f} "
            f"| {s.repair.recall:.4f} | {s.repair.cells_changed:.1f} |"
            for s in real
            if s.repair is not None
        ),
        "",
    ]


def _row(s: Summary) -> str:
    lost = "-" if s.mean_rows_lost is None else f"{s.mean_rows_lost:.2f}"
    crashed = f" ({s.crashed} crashed)" if s.crashed else ""
    return (
        f"| {s.family} | `{s.agent}` | {s.episodes}{crashed} | {s.mean_score:.4f} "
        f"| [{s.ci_low:.4f}, {s.ci_high:.4f}] | {s.invalid_rate:.1%} | {s.exact_rate:.1%} "
        f"| {lost} |"
    )


def plot(summaries: Sequence[Summary], path: Path) -> None:
    """Grouped bars: one group per family, one bar per agent, the interval as error bars.
    Needs the `report` extra (matplotlib), which the dev group includes."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers and CI
    import matplotlib.pyplot as plt

    families = list(dict.fromkeys(s.family for s in summaries))
    agents = list(dict.fromkeys(s.agent for s in summaries))
    by_key = {(s.agent, s.family): s for s in summaries}
    width = 0.8 / len(agents)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.6 * len(families)), 4.2), dpi=120)
    for i, agent in enumerate(agents):
        positions: list[float] = []
        means: list[float] = []
        errors: list[list[float]] = [[], []]  # distances below and above each mean
        for j, family in enumerate(families):
            s = by_key.get((agent, family))
            if s is None:
                continue
            positions.append(j - 0.4 + width * (i + 0.5))
            means.append(s.mean_score)
            errors[0].append(s.mean_score - s.ci_low)
            errors[1].append(s.ci_high - s.mean_score)
        axes.bar(positions, means, width, yerr=errors, capsize=2, label=agent)
    axes.set_xticks(range(len(families)), families)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("mean final score")
    axes.set_title("Final score by family (95% bootstrap interval)")
    axes.legend(
        fontsize="small",
        ncols=min(len(agents), 5),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12),
        frameon=False,
    )
    figure.tight_layout()
    figure.savefig(path, bbox_inches="tight", metadata={"Software": None})  # no version stamp
    plt.close(figure)
