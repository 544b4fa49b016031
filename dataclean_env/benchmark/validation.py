"""The validation sweep (in the spirit of OpenEnv's RFC 008 on environment validation):
degenerate policies must not beat doing nothing, and the reference plan scores the most.

Over seeds of every suite family, each degenerate policy plays fresh copies of the
instance and keeps the best score it reaches after any of its steps (finishing there would
have kept it); that best, less the do-nothing score, is its margin. A deterministic
policy's margin must never be above 0 (within `TOLERANCE`) on any instance; the random
agent, which can hit a real repair by chance and does not know when to stop, is scored by
its final score and must not be above 0 on average over the sweep. Per family it may be:
on `inventory` its parameterless `strip` and `fix_dtype` are that family's real repairs. The reference plan
must score at least every policy's best, and the maximum (0.9999). A policy with no
operation to act through in a task kind (dropping rows in a detection task) is `n/a`.

The policies see what an agent sees (the table), never gold:
* do nothing: `finish`;
* drop all rows: `DELETE FROM t`;
* mode overwrite: every column set to its most frequent value, one column a step;
* blanket updates: one column set to one of its two most frequent values, one such
  update per fresh episode (the issue's `UPDATE t SET status = 'returned'`);
* report every cell: every cell claimed wrong (detection, audit), and in an audit every
  error category claimed present;
* cast every column: every column cast to text, one column a step (a cast to a number is
  the real repair of numbers held as text, so it is not degenerate);
* random: `RandomAgent`, seeded by family, split and seed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.agents.random_agent import RandomAgent
from dataclean_env.benchmark.measure import final_score
from dataclean_env.benchmark.normalised import anchors
from dataclean_env.benchmark.suite import suite_named
from dataclean_env.engine.doors import attempt
from dataclean_env.engine.episode import Episode
from dataclean_env.grading.truth import ERROR_TYPES
from dataclean_env.operations.claims import MAX_CLAIMS
from dataclean_env.table.limits import untimed_limits
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import MISSING
from dataclean_env.tasks import TaskRegistry
from dataclean_env.tasks.corpus import SUITE_FAMILY as CORPUS
from dataclean_env.tasks.corpus import suite_table
from dataclean_env.tasks.registry import Task

FINISH = {"operation": "finish", "parameters": {}}
# Margins below half the reward's last place (it is rounded to 4) count as none.
TOLERANCE = 0.00005
# An edit of the table, as each task kind's operations express it.
Edit = tuple[Any, ...]  # ("drop_all",) | ("set", column, value) | ("cast", column, dtype)
Plan = list[dict[str, Any]]
POLICIES = (
    "do nothing",
    "drop all rows",
    "mode overwrite",
    "blanket updates",
    "report every cell",
    "cast every column",
    "random",
)
RANDOM = "random"


@dataclass(frozen=True)
class Outcome:
    """One instance: the do-nothing and reference-plan scores, each policy's margin (best
    score less doing nothing; None when the kind offers the policy no operation)."""

    family: str
    seed: int
    do_nothing: float
    oracle: float
    margins: dict[str, float | None]


def _columns(task: Task, snapshot: Snapshot) -> list[str]:
    return [c for c in snapshot.columns if c not in task.spec.protected_columns]


def _frequent(values: Iterable[Any], how_many: int) -> list[Any]:
    """The column's `how_many` most frequent present values, but a value most of its
    present cells hold: writing that one over the column is the majority-vote repair the
    table itself proves, not a blanket guess (on the corpus: `month` of corpus_flights, 1
    in every clean row with 134 cells blanked; `type` of corpus_planes, 94% one value and
    the rest its case variants)."""
    counts = Counter(v for v in values if v is not MISSING)
    present = sum(counts.values())
    common = counts.most_common(how_many)
    return [value for value, count in common if 2 * count <= present]


def _literal(value: Any) -> str:
    """`value` as a DuckDB literal."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) and math.isfinite(value):
        return repr(value)
    if isinstance(value, datetime | date):
        return "'" + value.isoformat() + "'"
    return "'" + str(value).replace("'", "''") + "'"


def _text(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime | date) else str(value)


def _fix_operation(edit: Edit) -> dict[str, Any]:
    """A cleaning operation doing `edit` (what a clean task steps and an audit's fix runs)."""
    if edit[0] == "drop_all":
        return {"operation": "sql", "parameters": {"sql": "DELETE FROM t"}}
    _, column, value = edit
    if edit[0] == "cast":
        return {"operation": "fix_dtype", "parameters": {"column": column, "dtype": value}}
    quoted = '"' + column.replace('"', '""') + '"'
    sql = f"UPDATE t SET {quoted} = {_literal(value)}"
    return {"operation": "sql", "parameters": {"sql": sql}}


def _transform(edit: Edit) -> dict[str, Any] | None:
    """A standardise step doing `edit` (None: a transform cannot drop rows)."""
    if edit[0] == "drop_all":
        return None
    _, column, value = edit
    step = (
        {"operation": "fix_dtype", "parameters": {"dtype": value}}
        if edit[0] == "cast"
        else {
            "operation": "regex_replace",
            "parameters": {"pattern": "^.*$", "replacement": _text(value)},
        }
    )
    return {"operation": "standardise", "parameters": {"transforms": {column: [step]}}}


def _audit(
    fixes: list[dict[str, Any]],
    cells: list[dict[str, Any]] | None = None,
    categories: Sequence[str] = (),
) -> Plan:
    return [
        {"operation": "audit", "parameters": {"categories": list(categories)}},
        {"operation": "identify", "parameters": {"cells": cells or []}},
        {"operation": "fix", "parameters": {"operations": fixes}},
        {"operation": "validate", "parameters": {"issues_remaining": 0}},
    ]


def plan_of(kind: str, edits: Sequence[Edit]) -> Plan | None:
    """The steps that make `edits` in a task of `kind`, one edit a step where the kind
    allows (so every prefix is scored); None when the kind cannot make them."""
    if kind == "clean":
        return [_fix_operation(edit) for edit in edits]
    if kind == "audit":
        return _audit([_fix_operation(edit) for edit in edits])
    if kind == "standardisation":
        steps = [_transform(edit) for edit in edits]
        return None if any(s is None for s in steps) else [s for s in steps if s is not None]
    return None


def _every_cell(task: Task, snapshot: Snapshot) -> list[dict[str, Any]]:
    (key,) = task.spec.protected_columns
    return [
        {"row_id": row_id, "column": column}
        for row_id in snapshot.values[key]
        for column in _columns(task, snapshot)
    ]


def plans(policy: str, task: Task, snapshot: Snapshot) -> list[Plan] | None:
    """The plans `policy` plays on `task` (each from a fresh copy), or None: not applicable."""
    kind, columns = task.spec.kind, _columns(task, snapshot)
    if policy == "do nothing":
        return [[]]
    if policy == "report every cell":
        cells = _every_cell(task, snapshot)
        if kind == "audit":
            return [_audit([], cells[:MAX_CLAIMS], ERROR_TYPES)]
        if kind != "detection":
            return None
        chunks = [cells[i : i + MAX_CLAIMS] for i in range(0, len(cells), MAX_CLAIMS)]
        return [[{"operation": "report_errors", "parameters": {"cells": c}} for c in chunks]]
    groups: list[list[Edit]]
    if policy == "drop all rows":
        groups = [[("drop_all",)]]
    elif policy == "mode overwrite":
        groups = [[("set", c, mode) for c in columns for mode in _frequent(snapshot.values[c], 1)]]
    elif policy == "blanket updates":
        groups = [
            [("set", c, value)] for c in columns for value in _frequent(snapshot.values[c], 2)
        ]
    elif policy == "cast every column":
        groups = [[("cast", c, "str") for c in columns]]
    else:
        raise ValueError(f"unknown policy {policy!r}")
    made = [plan_of(kind, group) for group in groups]
    return None if any(p is None for p in made) else [p for p in made if p is not None]


def best_score(episode: Episode, steps: Iterable[dict[str, Any]]) -> float:
    """The best score `episode` reaches after any of `steps` (refused ones change nothing),
    then `finish` if it is not done: the score at any step is one the agent could have kept
    by finishing there."""
    best = -math.inf
    for step in steps:
        if episode.done:
            break
        attempt(episode, step)
        best = max(best, episode.score)
    if not episode.done:
        attempt(episode, FINISH)
    return max(best, episode.score)


def random_final(make: Callable[[], Task], key: EpisodeKey) -> float:
    """The random agent's final score: it does not know when to stop, so what it ends
    with is what it earns (the baseline report's rule)."""
    task = make()
    return final_score(task, RandomAgent(key))


def task_id(family: str, seed: int) -> str:
    """The task a suite family's seed plays: the corpus family's seed picks its table as
    the suite's index does (seed modulo the tables)."""
    return suite_table(seed) if family == CORPUS else family


def sweep_instance(registry: TaskRegistry, family: str, seed: int, split: str) -> Outcome:
    def make() -> Task:
        return registry.make(task_id(family, seed), seed, split)

    marks = anchors(make)
    snapshot = Episode("sweep-look", make(), untimed_limits()).snapshot
    margins: dict[str, float | None] = {}
    for policy in POLICIES:
        if policy == RANDOM:
            best: float | None = random_final(make, EpisodeKey(family, seed, split))
        else:
            chosen = plans(policy, make(), snapshot)
            best = (
                None
                if chosen is None
                else max(
                    best_score(Episode("sweep", make(), untimed_limits()), plan) for plan in chosen
                )
            )
        margins[policy] = None if best is None else round(best - marks.do_nothing, 6)
    return Outcome(family, seed, marks.do_nothing, marks.oracle, margins)


def families() -> tuple[str, ...]:
    """Every family the benchmark suite plays, the real-table `corpus` included."""
    return tuple(suite_named("full").families)


def sweep(registry: TaskRegistry, seeds: Sequence[int], split: str) -> list[Outcome]:
    return [sweep_instance(registry, f, s, split) for f in families() for s in seeds]


def violations(outcomes: Sequence[Outcome]) -> list[str]:
    """What breaks the sweep's rules: a deterministic policy above doing nothing on an
    instance, the random agent above it on a family's mean, a reference plan below a
    policy's best or below the maximum score."""
    found = []
    for o in outcomes:
        for policy, margin in o.margins.items():
            if policy != RANDOM and margin is not None and margin > TOLERANCE:
                found.append(f"{o.family} seed {o.seed}: {policy} {margin:+.6f}")
            if margin is not None and o.do_nothing + margin > o.oracle + TOLERANCE:
                found.append(f"{o.family} seed {o.seed}: {policy} beats the reference plan")
        if o.oracle < 0.9999:
            found.append(f"{o.family} seed {o.seed}: reference plan {o.oracle}")
    mean = random_mean(outcomes)
    if mean is not None and mean > TOLERANCE:
        found.append(f"random {mean:+.6f} on average")
    return found


def random_mean(outcomes: Sequence[Outcome]) -> float | None:
    margins = [m for o in outcomes if (m := o.margins[RANDOM]) is not None]
    return sum(margins) / len(margins) if margins else None
