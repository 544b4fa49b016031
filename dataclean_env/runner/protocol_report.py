"""The error-repair literature's protocol on the real tables: per table, error-detection and
error-correction precision, recall and F1, each as mean ± sd over seeds, for the reference
agent at 0 and 20 labels and for Raha+Baran at 20 labels.

Every agent's episode ends in a table; both figures are read from it by the task's grader:
*correction* is the reward's cell-repair figures, *detection* counts a changed cell as a
cell the agent flagged (`CellRepairGrader.detection`). The reference agent is played here,
in-process; Raha+Baran runs in its own venv (`integrations/raha/raha_baran.py --actions`),
and its recorded steps are replayed here, so both are measured by the same code. A recorded
run without its steps keeps its correction figures and has no detection figures.
"""

from __future__ import annotations

import io
import json
import statistics
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.agents.protocol import Agent, EpisodeKey
from dataclean_env.grading.cell_repair import CellRepairGrader, RepairCounts
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.runner.loop import run_episode
from dataclean_env.table.limits import untimed_limits
from dataclean_env.tasks.registry import TaskRegistry

LABELLED = "-labelled"
SPLIT = "train"  # the split Raha+Baran's resets use (the REST default)
REFERENCE = "heuristic-baseline"
RAHA = "raha-baran"
FIGURES = ("detection", "correction")
# The tables the reference agent's real-table mode was developed on (leave-one-table-out:
# every other table was held out, its figures never looked at while tuning).
TUNED_ON = ("rayyan", "corpus_airports", "corpus_flights", "corpus_planes")
BEGIN, END = "<!-- protocol:begin -->", "<!-- protocol:end -->"
PUBLISHED = (
    "Published, for comparison only (not measured here, and on other tables): BClean "
    "(arXiv 2311.06517, Table 4) reports correction F1 0.73 / 0.73 / 0.87 for Raha+Baran on hospital / flights / beers, "
    "0.63 for HoloClean on hospital, 0.98 for BClean and 0.96 for PClean on hospital."
)

Run = dict[str, Any]


def figures(counts: RepairCounts) -> dict[str, float]:
    return {name: round(value, 4) for name, value in counts.scores().items()}


def measured(env: LocalBackend, seed: int) -> Run:
    """The episode's final table's detection and correction figures."""
    episode = env.episode
    if episode is None or not isinstance(episode.task.grader, CellRepairGrader):
        raise TypeError("a real table's episode is graded by cell repair")
    grader, snapshot = episode.task.grader, episode.snapshot
    return {
        "seed": seed,
        "detection": figures(grader.detection(snapshot)),
        "correction": figures(grader.counts(snapshot)),
    }


def play_reference(
    registry: TaskRegistry, task: str, seeds: Sequence[int], agent: Callable[[], Agent]
) -> list[Run]:
    """`agent` on `task` at each seed, in-process and untimed (a busy machine changes no
    figure)."""
    env = LocalBackend(registry, untimed_limits())
    runs = []
    for seed in seeds:
        result = run_episode(env, agent(), EpisodeKey(task, seed, SPLIT), out=io.StringIO())
        if result.error:
            raise RuntimeError(f"{task} seed {seed}: {result.error}")
        runs.append(measured(env, seed))
    return runs


def replay(registry: TaskRegistry, task: str, run: Run) -> Run:
    """A recorded Raha+Baran run measured again: its steps replayed in-process, or, without
    them, its recorded correction figures."""
    if "actions" not in run:
        recorded = {name: run[name] for name in ("precision", "recall", "f1")}
        return {"seed": run["seed"], "detection": None, "correction": recorded}
    env = LocalBackend(registry, untimed_limits())
    env.reset(EpisodeKey(task, run["seed"], SPLIT))
    for action in [*run["actions"], {"operation": "finish", "parameters": {}}]:
        step = env.step(action)
        if step.error:
            raise RuntimeError(f"{task} seed {run['seed']}: a replayed step was refused")
    return measured(env, run["seed"])


def recorded_runs(paths: Iterable[Path]) -> dict[str, dict[int, Run]]:
    """Raha+Baran's recorded runs (files written by its `--out`), by task and seed."""
    runs: dict[str, dict[int, Run]] = {}
    for path in paths:
        for run in json.loads(path.read_text(encoding="utf-8"))["runs"]:
            runs.setdefault(run["task"], {})[run["seed"]] = run
    return runs


def measure(
    registry: TaskRegistry,
    tables: Sequence[str],
    seeds: Sequence[int],
    raha: dict[str, dict[int, Run]],
    kept: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report's results: per table, each agent's runs (the reference agent's taken from
    `kept`, earlier results of the same seeds, where given)."""
    earlier = {t["table"]: t["agents"] for t in kept["tables"]} if kept else {}
    results = []
    for table in tables:
        labelled = table + LABELLED
        agents = {
            f"{REFERENCE}@{labels}": earlier[table][f"{REFERENCE}@{labels}"]
            if table in earlier
            else play_reference(registry, task, seeds, HeuristicAgent)
            for labels, task in ((0, table), (20, labelled))
        }
        recorded = raha.get(labelled, {})
        agents[f"{RAHA}@20"] = [
            replay(registry, labelled, recorded[s]) for s in seeds if s in recorded
        ]
        results.append({"table": table, "agents": agents})
    return {"split": SPLIT, "seeds": list(seeds), "tables": results}


def spread(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.3f} ± {sd:.3f}"


def markdown(results: dict[str, Any]) -> list[str]:
    """The section's lines (between BEGIN and END)."""
    seeds = ", ".join(str(s) for s in results["seeds"])
    lines = [
        BEGIN,
        "",
        f"Seeds {seeds} (split `{results['split']}`), mean ± sd over the runs; each seed is "
        "another instance of a corpus table, and on every table another order of rows, so "
        "another sample of 20 labelled tuples. Detection counts a changed cell as a flagged "
        "one; correction is the grader's cell-repair figures. Written by "
        "`uv run python scripts/real_tables_report.py`.",
        "",
        f"Split: the reference agent was developed on {', '.join(TUNED_ON)} (`tuned`); "
        "every other table is `held out`, its figures not looked at while developing.",
        "",
        "| table | split | agent | labels | runs | detection P | detection R | detection F1 "
        "| correction P | correction R | correction F1 |",
        "|---|---|---|---:|---:|---|---|---|---|---|---|",
    ]
    held_out: dict[str, dict[str, float]] = {}  # agent at labels -> table -> correction F1
    for table in results["tables"]:
        split = "tuned" if table["table"] in TUNED_ON else "held out"
        for name, runs in table["agents"].items():
            agent, labels = name.split("@")
            row = f"| {table['table']} | {split} | `{agent}` | {labels}"
            if not runs:
                lines.append(f"{row} | 0 |" + " not run |" * 6)
                continue
            if split == "held out":
                f1 = statistics.fmean(r["correction"]["f1"] for r in runs)
                held_out.setdefault(f"`{agent}` at {labels} labels", {})[table["table"]] = f1
            cells = []
            for figure in FIGURES:
                for part in ("precision", "recall", "f1"):
                    values = [r[figure][part] for r in runs if r[figure] is not None]
                    cells.append(spread(values) if values else "not recorded")
            lines.append(f"{row} | {len(runs)} | " + " | ".join(cells) + " |")
    return [*lines, *held_out_means(held_out), "", PUBLISHED, "", END]


def held_out_means(held_out: dict[str, dict[str, float]]) -> list[str]:
    """The agents' mean correction F1 over the held-out tables every one of them ran (a mean
    over other tables would compare nothing)."""
    tables = sorted(set.intersection(*map(set, held_out.values()))) if held_out else []
    if not tables:
        return []
    means = "; ".join(
        f"{name} {statistics.fmean(f1s[t] for t in tables):.3f}" for name, f1s in held_out.items()
    )
    over = ", ".join(tables)
    return ["", f"Mean correction F1 over the held-out tables every agent ran ({over}): {means}."]


def splice(text: str, section: list[str]) -> str:
    """`text` with the lines between BEGIN and END (both kept) replaced by `section`."""
    before, rest = text.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    return before + "\n".join(section) + after


RESULTS = Path("docs") / "real_tables.json"
HEADING = "## Real tables: the literature's protocol"


def load(path: Path = RESULTS) -> dict[str, Any] | None:
    """The committed results, or None where there are none (e.g. an installed package)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def baselines_section(results: dict[str, Any] | None) -> str:
    """The baseline report's section (empty without results)."""
    if results is None:
        return ""
    return "\n".join(["", HEADING, "", *markdown(results), ""])
