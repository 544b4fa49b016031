"""One grouping of the tasks into families, the registry's (`/tasks`' `families`, which the
web page draws its task cards from): the run summary (`inference.py`'s stderr) groups by it,
and the README's table of families names the same groups and tasks."""

from __future__ import annotations

import re
from pathlib import Path

from dataclean_env.benchmark.results import EpisodeResult
from dataclean_env.runner.cli import family_of
from dataclean_env.runner.summary import summary_lines
from dataclean_env.tasks import default_registry

README = Path(__file__).resolve().parents[3] / "README.md"
GROUPS = {
    "fixed": ["easy_dedup_rename", "medium_missing_dtype", "hard_full_pipeline"],
    "generated": ["fix_types", "normalize_dedupe", "full_pipeline", "crm", "orders"],
    "claims": ["error_detection", "standardisation", "audit_pipeline", "detection_showcase"],
    "corpus": ["corpus_planes", "corpus_planes-labelled", "corpus_seattle_weather"],
    "custom": ["rayyan", "rayyan-labelled"],
}


def test_the_registry_groups_the_tasks_in_five_families() -> None:
    families = {f["name"]: f["task_ids"] for f in default_registry().families()}
    assert list(families) == list(GROUPS)
    for name, some in GROUPS.items():
        assert set(some) <= set(families[name]), name
    assert {"rayyan_detection", "rayyan_audit", "inventory"} <= {
        *families["claims"],
        *families["generated"],
    }


def test_the_run_summary_groups_by_the_registrys_families() -> None:
    registry = default_registry()
    families = {t: f["name"] for f in registry.families() for t in f["task_ids"]}
    assert {t: family_of(registry, t) for t in registry.task_ids()} == families
    played = ["error_detection", "rayyan_detection", "audit_showcase", "crm", "rayyan"]
    results = [
        EpisodeResult(t, "train", None, "m", 1, 0.5, False, {}, 0, None, 0.1) for t in played
    ]
    lines = summary_lines(results, lambda task_id: family_of(registry, task_id))
    assert [line.split()[0] for line in lines if line.startswith("family=")] == [
        "family=claims",
        "family=generated",
        "family=custom",
    ]
    assert family_of(registry, "no_such_task") == "unknown"


def test_the_readme_table_names_the_same_families_and_tasks() -> None:
    text = README.read_text()
    table = text[text.index("| family | tasks |") : text.index("## What the reward means")]
    rows = [line for line in table.splitlines()[2:] if line.startswith("| [")]
    families = {f["name"]: f["task_ids"] for f in default_registry().families()}
    named = [re.match(r"\| \[(\w+)\]", row).group(1) for row in rows]  # type: ignore[union-attr]
    assert named == list(families)
    for name, row in zip(named, rows, strict=True):
        tasks = row.split("|")[2]
        assert set(re.findall(r"`([\w-]+)`", tasks)) <= set(families[name]), name
