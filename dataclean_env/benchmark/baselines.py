"""The shipped baselines on the suite: every reference agent on the measurement's draw of
`dce-suite-1`, each episode raw and normalised, written beside the suite definition.

    python -m dataclean_env.benchmark.baselines     # writes suites/baselines.json

Playing five agents over the whole suite takes minutes, too long for every test run, so
this script plays it once and the docs (docs/BASELINES.md, the README's results table) are
rendered from the file it writes; a test checks the rendering and replays a fixed sample of
its episodes. The script also checks, on every instance, that the do-nothing agent
normalises to exactly 0 and the oracle agent to exactly 1 (exit status 1 otherwise).
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.agents.protocol import Agent, EpisodeKey
from dataclean_env.agents.random_agent import RandomAgent
from dataclean_env.agents.reference import NoOpAgent, OracleAgent
from dataclean_env.agents.template import TemplateAgent
from dataclean_env.benchmark.measure import (
    DRAW_SEED,
    SECRET,
    definition_digest,
    final_score,
    normalised,
    unclipped,
)
from dataclean_env.benchmark.normalised import anchors
from dataclean_env.benchmark.suite import DEFINITION, Cell, secret_instance, suite_named
from dataclean_env.tasks.registry import Task

BASELINES_FILE = DEFINITION.parent / "baselines.json"
# The shipped baselines, weakest first, each built for one instance.
AGENTS: dict[str, Callable[[Task, Cell, int], Agent]] = {
    "noop": lambda task, cell, index: NoOpAgent(),
    "random": lambda task, cell, index: RandomAgent(EpisodeKey(cell.family, index, "secret")),
    "template": lambda task, cell, index: TemplateAgent(),
    "heuristic": lambda task, cell, index: HeuristicAgent(),
    "oracle": lambda task, cell, index: OracleAgent(task.reference_plan),
}
AGENT_TITLES = {
    "noop": "do nothing",
    "random": "random",
    "template": "card-free template",
    "heuristic": "heuristic",
    "oracle": "oracle",
}


def instance_row(cell: Cell, index: int) -> dict[str, Any]:
    """One instance: its anchors and every agent's final score on a fresh copy of it."""

    def make() -> Task:
        return secret_instance(cell.family, SECRET, index)

    marks = anchors(make)
    raw = {}
    for name, build in AGENTS.items():
        task = make()
        raw[name] = final_score(task, build(task, cell, index))
    return {
        "family": cell.family,
        "difficulty": cell.difficulty,
        "index": str(index),
        "do_nothing": marks.do_nothing,
        "oracle": marks.oracle,
        "raw": raw,
        "normalised": {name: normalised(marks, score) for name, score in raw.items()},
        "unclipped": {name: unclipped(marks, score) for name, score in raw.items()},
    }


def anchor_failures(rows: list[dict[str, Any]]) -> list[str]:
    """Instances where doing nothing does not normalise to 0 or the oracle not to 1."""
    return [
        f"{r['family']}/{r['difficulty']}/{r['index']}: {r['normalised']}"
        for r in rows
        if r["normalised"]["noop"] != 0.0 or r["normalised"]["oracle"] != 1.0
    ]


def measure(suite_name: str = "full") -> dict[str, Any]:
    suite = suite_named(suite_name)
    rows = [instance_row(c, i) for c, i in suite.draw(SECRET, random.Random(DRAW_SEED))]
    return {
        "suite_version": suite.version,
        "definition_digest": definition_digest(),
        "agents": list(AGENTS),
        "episodes": rows,
    }


def dump(result: dict[str, Any]) -> str:
    """The file's text: one episode a line, so a change shows as the lines it moved."""
    head = {k: v for k, v in result.items() if k != "episodes"}
    lines = json.dumps(head, indent=1)[:-2] + ',\n "episodes": [\n'
    lines += ",\n".join("  " + json.dumps(row) for row in result["episodes"])
    return lines + "\n ]\n}\n"


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    result = measure()
    BASELINES_FILE.write_text(dump(result), encoding="utf-8")
    failures = anchor_failures(result["episodes"])
    print(
        f"{result['suite_version']}: {len(result['episodes'])} instances x "
        f"{len(AGENTS)} agents in {time.perf_counter() - started:.0f} s; "
        f"{len(failures)} instances where do-nothing is not 0 or the oracle not 1",
        file=sys.stderr,
    )
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
