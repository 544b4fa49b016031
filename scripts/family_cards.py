"""Write docs/families.md: one card per task family, in Gymnasium's sections.

    uv run python scripts/family_cards.py            # rewrites docs/families.md
    uv run python scripts/family_cards.py --check    # exit 1 when the file is stale

Everything on a card comes from what `GET /tasks` shows (each family's `instantiate` text
and each task's public spec) and from the Observation model: the script never makes a task,
so it reads no gold. A test regenerates the cards and compares them with the file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dataclean_env.schemas import Observation
from dataclean_env.settings import Settings, bundled_datasets
from dataclean_env.tasks import registry_for
from dataclean_env.tasks.claim_families import GENERATED as SEEDED_CLAIMS
from dataclean_env.tasks.claim_families import max_steps_bounds
from dataclean_env.tasks.corpus import MIN_STEPS

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "families.md"

# What each registry family is, in a sentence; the rest of each card is generated.
SUMMARY = {
    "fixed": "Four hand-built tables from the original CleanifyAI tasks, each with a stated "
    "pipeline order; graded by the five original components against gold.",
    "generated": "Seeded families with unlimited instances in train/eval/test splits; each "
    "instance's description is its own rule card. Graded by net repair (every wrong cell "
    "counts, broken or left) and row integrity, preservation shown; the key column is "
    "protected.",
    "claims": "Tasks graded on what the agent claims (errors found, standardising transforms, "
    "an audit in phases) rather than on a cleaned table; detection and audit scores are "
    "revealed when the episode ends, standardisation scores after every step.",
    "corpus": "Real tables that well-kept packages ship for offline use (aircraft, airports, "
    "hourly and daily weather, flights, countries), each dirtied by a seeded mix of error "
    "layers (tab-err's, and ours for the classes it lacks: case, column swaps, duplicates, "
    "conflicting reports of one entity) in train/eval/test and secret splits; graded by "
    "net repair (cell-repair F1 reported). The benchmark suite plays the tables as its "
    "real-table family `corpus` (docs/benchmark.md). One card per table, with its licence and source: "
    "docs/corpus.md.",
    "custom": "Any folder holding dirty.csv and clean.csv (the repository ships `rayyan`), "
    "read as text and graded by net repair (cell-repair F1 reported).",
}

KIND_TERMINATION = {
    "clean": "the agent sends `finish`",
    "detection": "the agent sends `finish`",
    "standardisation": "the agent sends `finish`",
    "audit": "the agent sends `finish`, or `validate` (the last phase) is accepted",
}


def first_sentence(text: str) -> str:
    """A task description's opening sentence (the rest is the task's rule card)."""
    head = " ".join(text.split())
    end = head.find(". ")
    return head if end < 0 else head[: end + 1]


def table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


def max_steps(task: dict[str, Any]) -> str:
    """A task's budget; a seeded claims family's grows with the instance's table."""
    if task["task_id"] in SEEDED_CLAIMS:
        low, high = max_steps_bounds(task["task_id"])
        return f"{low} to {high}, by instance"
    if task["family"] == "corpus":
        return f"{MIN_STEPS}, or its reference repair's length when longer, by instance"
    return str(task["max_steps"])


def weights(scoring: dict[str, float]) -> str:
    return ", ".join(f"`{name}` {weight:g}" for name, weight in scoring.items())


def observation_fields() -> list[str]:
    return [
        f"- `{name}`: {field.description}"
        for name, field in Observation.model_fields.items()
        if field.description
    ]


def card(family: dict[str, Any], tasks: list[dict[str, Any]]) -> list[str]:
    name = family["name"]
    kinds = sorted({task["kind"] for task in tasks})
    versions = [task for task in tasks if task["version"]]
    out = [f"## `{name}`", ""]
    out += ["### Description", "", SUMMARY.get(name, ""), ""]
    out += table(
        ["task", "difficulty", "kind", "opening of its description"],
        (
            (f"`{t['task_id']}`", t["difficulty"], t["kind"], first_sentence(t["description"]))
            for t in tasks
        ),
    )
    out += ["", "### Action Space", ""]
    out += [
        'One operation per step, `{"operation": name, "parameters": {...}}`; `GET /schema` '
        "gives every parameter. An operation a task does not list is refused with "
        "`OPERATION_NOT_ALLOWED`; a refused action changes nothing.",
        "",
    ]
    out += table(
        ["task", "operations"],
        ((f"`{t['task_id']}`", ", ".join(t["operations"])) for t in tasks),
    )
    out += ["", "### Observation Space", ""]
    out += ["The same fields for every task (the `Observation` model):", ""]
    out += observation_fields()
    out += ["", "### Rewards", ""]
    out += [
        "The reward object's `total` combines these components (each in [0.0001, 0.9999]) "
        "with these weights. By default a step's float reward is the change in `total` it "
        'caused (`reward_mode="delta"`); `"absolute"` gives the score itself and '
        '`"hidden"` reveals nothing until the episode ends.',
        "",
    ]
    out += table(
        ["task", "components and weights", "label budget"],
        ((f"`{t['task_id']}`", weights(t["scoring"]), t["label_budget"]) for t in tasks),
    )
    out += ["", "### Starting State", "", family["instantiate"], ""]
    out += ["### Episode End", ""]
    out += [
        "- **Termination**: " + "; ".join(f"{k}: {KIND_TERMINATION[k]}" for k in kinds) + ".",
        "- **Truncation**: the accepted steps reach the task's `max_steps`, or as many "
        "refused actions are sent (`info.truncated`, `info.end_reason`).",
        "",
    ]
    out += table(["task", "max_steps"], ((f"`{t['task_id']}`", max_steps(t)) for t in tasks))
    out += ["", "### Arguments", ""]
    out += [
        "Reset options (REST body or `/ws` reset frame): `task_id`, `seed`, `split`, "
        "`episode_id`, `reward_mode` (`delta`, `absolute`, `hidden`).",
        "",
    ]
    out += ["### Version History", ""]
    if versions:
        out += [
            "The plain task id serves the current generator version; a change to what a "
            "seed produces bumps it (a unit test pins a digest per version).",
            "",
        ]
        out += table(
            ["task", "current version"],
            ((f"`{t['task_id']}`", f"`{t['version']}`") for t in versions),
        )
    else:
        out += ["No generator: the tables are files, unversioned."]
    return [*out, ""]


def render() -> str:
    registry = registry_for(Settings(datasets_dir=bundled_datasets(), extra_datasets=""))
    public = {spec.task_id: spec.public() | {"kind": spec.kind} for spec in registry.specs()}
    out = [
        "# Task families",
        "",
        "<!-- Written by scripts/family_cards.py from the task registry; do not edit. -->",
        "",
        "One card per family of the registry, in Gymnasium's sections. Each task's full "
        "description is in `GET /tasks` and in every observation (`task_description`).",
        "",
    ]
    for family in registry.families():
        out += card(family, [public[task_id] for task_id in family["task_ids"]])
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    text = render()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: run scripts/family_cards.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
