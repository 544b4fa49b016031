"""The shipped baselines on the suite, as docs/BASELINES.md's section and the README's
results table: rendered from `dataclean_env/benchmark/suites/baselines.json` (what
`python -m dataclean_env.benchmark.baselines` played), per family and for the whole suite,
normalised (clipped per episode, and unclipped beside it) and raw, each with its 95%
bootstrap interval."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dataclean_env.benchmark.baselines import AGENT_TITLES, BASELINES_FILE
from dataclean_env.benchmark.normalised import MEANING
from dataclean_env.benchmark.stats import bootstrap_interval

SUITE_ROW = "suite"  # the row that pools every episode
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


@dataclass(frozen=True)
class Mean:
    mean: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.mean:.4f} [{self.low:.4f}, {self.high:.4f}]"


def _mean(values: list[float]) -> Mean:
    low, high = bootstrap_interval(values)
    return Mean(float(np.mean(values)), low, high)


@dataclass(frozen=True)
class SuiteSummary:
    group: str  # a family, or SUITE_ROW
    agent: str
    episodes: int
    normalised: Mean
    unclipped: Mean  # the same share before the per-episode clip at 0 and 1
    below_nothing: int  # episodes the agent left worse than doing nothing
    raw: Mean


def load(path: Path = BASELINES_FILE) -> dict[str, Any]:
    baselines: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return baselines


def summaries(data: dict[str, Any]) -> list[SuiteSummary]:
    """The suite row, then each family in the suite's order; every agent in each."""
    rows = data["episodes"]
    groups = [SUITE_ROW, *dict.fromkeys(r["family"] for r in rows)]
    out = []
    for group in groups:
        chosen = [r for r in rows if group in (SUITE_ROW, r["family"])]
        for agent in data["agents"]:
            out.append(
                SuiteSummary(
                    group,
                    agent,
                    len(chosen),
                    _mean([r["normalised"][agent] for r in chosen]),
                    _mean([r["unclipped"][agent] for r in chosen]),
                    sum(1 for r in chosen if r["unclipped"][agent] < 0),
                    _mean([r["raw"][agent] for r in chosen]),
                )
            )
    return out


def _about(data: dict[str, Any]) -> str:
    return (
        f"Every shipped baseline on one seeded draw of `{data['suite_version']}` "
        f"({len(data['episodes'])} instances, each played by every agent), "
        "as `python -m dataclean_env.benchmark.baselines` played it into "
        "`dataclean_env/benchmark/suites/baselines.json`; 95% bootstrap intervals."
    )


# Why the unclipped mean stands beside the clipped one.
UNCLIPPED = (
    "Clipping each episode at 0 keeps a gamble's wins and hides its losses, so the unclipped "
    "mean, (final - do_nothing) / (oracle - do_nothing) before the clip, stands beside it: "
    "below 0, the agent does worse than doing nothing, whatever its clipped mean."
)
BELOW_NOTHING = "`< nothing` counts the episodes the agent left worse than doing nothing."


def baselines_section(data: dict[str, Any], table: list[SuiteSummary]) -> list[str]:
    """docs/BASELINES.md's suite section; `table` is `summaries(data)`."""
    return [
        "## The suite: normalised scores",
        "",
        MEANING,
        "",
        f"{UNCLIPPED} {BELOW_NOTHING}",
        "",
        _about(data),
        "",
        "| family | agent | episodes | normalised | 95% interval | unclipped | 95% interval "
        "| < nothing | raw | 95% interval |",
        "|---|---|---:|---:|---|---:|---|---:|---:|---|",
        *(
            f"| {s.group} | {AGENT_TITLES[s.agent]} | {s.episodes} | {s.normalised.mean:.4f} "
            f"| [{s.normalised.low:.4f}, {s.normalised.high:.4f}] | {s.unclipped.mean:.4f} "
            f"| [{s.unclipped.low:.4f}, {s.unclipped.high:.4f}] | {s.below_nothing} "
            f"| {s.raw.mean:.4f} | [{s.raw.low:.4f}, {s.raw.high:.4f}] |"
            for s in table
        ),
        "",
    ]


def readme_block(data: dict[str, Any], table: list[SuiteSummary]) -> str:
    """The README's results table (between BEGIN and END): one row per family, one column
    per agent, normalised, unclipped, then raw; `table` is `summaries(data)`."""
    agents = data["agents"]
    groups = list(dict.fromkeys(s.group for s in table))
    by_key = {(s.group, s.agent): s for s in table}
    head = "| family | " + " | ".join(AGENT_TITLES[a] for a in agents) + " |"
    rule = "|---|" + "---|" * len(agents)
    lines = [BEGIN, MEANING, "", UNCLIPPED, "", _about(data), ""]
    for kind in ("normalised", "unclipped", "raw"):
        lines += [f"**{kind.capitalize()}** (mean [95% interval]):", "", head, rule]
        for group in groups:
            cells = [str(getattr(by_key[(group, a)], kind)) for a in agents]
            name = f"**{group}**" if group == SUITE_ROW else group
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def with_readme_block(readme: str, block: str) -> str:
    """`readme` with its results block replaced by `block`."""
    start, stop = readme.index(BEGIN), readme.index(END) + len(END)
    return readme[:start] + block + readme[stop:]


def block_of(readme: str) -> str:
    """The results block `readme` holds."""
    return readme[readme.index(BEGIN) : readme.index(END) + len(END)]
