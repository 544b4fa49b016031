"""Write the fixed tasks' table in docs/tasks.md from the tasks themselves.

    uv run python scripts/tasks_doc.py            # rewrites the part between the markers
    uv run python scripts/tasks_doc.py --check    # exit 1 when that part is stale

Rows (dirty → gold), step budgets and weights are read from `datasets/task_metadata.json`
and the tasks' CSVs through the fixed-task loader, so the table cannot drift from the data;
a test compares the committed part with what this writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dataclean_env.settings import bundled_datasets
from dataclean_env.tasks.fixed import load_fixed_task, load_metadata

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "tasks.md"
START, END = "<!-- fixed-tasks:start -->", "<!-- fixed-tasks:end -->"

# What each fixed task asks, in a phrase; the rest of each row is read from the task.
ASKS = {
    "easy_dedup_rename": "drop exact duplicates; rename garbled headers to "
    "`emp_id, emp_name, dept, salary, age`",
    "medium_missing_dtype": "fill age/salary with the mean, gender/region with the mode; fix "
    "types (salary is text like `$48,250`)",
    "hard_full_pipeline": "dedup; fill quantity/price with the median; fix types; drop price "
    "outliers (IQR); validate",
    "expert_sales_pipeline": "the same with messy headers, per-column fill statistics, and an "
    "order that matters",
}


def rows(dirty: int, gold: int) -> str:
    return str(dirty) if dirty == gold else f"{dirty} → {gold}"


def weights(scoring: dict[str, float]) -> str:
    """`duplicate .5, schema .5`: each component without its `_score`, its weight as a decimal."""
    return ", ".join(
        f"{name.removesuffix('_score')} {f'{weight:g}'.removeprefix('0')}"
        for name, weight in scoring.items()
    )


def render() -> str:
    datasets = bundled_datasets()
    lines = [
        START,
        "<!-- Written by scripts/tasks_doc.py from the fixed tasks; do not edit. -->",
        "| task | rows | max steps | what the agent must do | weights |",
        "|---|---|---|---|---|",
    ]
    for entry in load_metadata(datasets):
        task = load_fixed_task(datasets, entry)
        spec = task.spec
        cells = (
            f"`{spec.task_id}`",
            rows(len(task.dirty), task.grader.facts.n_rows),
            str(spec.max_steps),
            ASKS[spec.task_id],
            weights(dict(spec.scoring)),
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join([*lines, END])


def with_tasks(text: str) -> str:
    before, rest = text.split(START, 1)
    return before + render() + rest.split(END, 1)[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the table is stale")
    args = parser.parse_args()
    text = DOC.read_text(encoding="utf-8")
    if args.check:
        if with_tasks(text) != text:
            print(f"{DOC} is stale: run scripts/tasks_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(with_tasks(text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
