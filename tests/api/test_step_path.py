"""A REST step's path from its route to the grader stays short, and the README names the
path that runs (`scripts/step_path.py` traces it with `sys.setprofile`)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import step_path  # noqa: E402

_OPERATION = re.compile(r"^operations/(?!registry\.py)\w+\.py$")


@pytest.fixture(scope="module")
def paths() -> list[tuple[str, str, list[str], list[str]]]:
    return step_path.step_paths()


def _named(files: list[str]) -> list[str]:
    """The path with the operation's own module written as the README writes it."""
    return ["operations/<operation>.py" if _OPERATION.match(f) else f for f in files]


def test_every_step_reaches_the_grader_through_at_most_8_files(paths) -> None:
    graded = {(task, operation) for task, operation, _, _ in paths}
    assert ("hard_full_pipeline", "remove_outliers") in graded  # the plans' steps were traced
    for task, operation, files, _ in paths:
        assert len(files) <= step_path.MAX_FILES, (task, operation, files)
        assert files[0] == step_path.ROUTE, (task, operation, files)


def test_the_readme_names_the_path_that_runs(paths) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- step-path:begin -->")[1].split("<!-- step-path:end -->")[0]
    named = [name.strip().strip("`") for name in block.strip().split("→")]
    longest = max((files for _, _, files, _ in paths), key=len)
    assert named == _named(longest)


def test_design_counts_the_files_a_step_touches_that_run(paths) -> None:
    design = " ".join((ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8").split())
    touched = max(len(files) for _, _, _, files in paths)
    assert f"snapshots: {touched} files in all before the grader)" in design
    bound = step_path.MAX_FILES
    assert f"a test keeps the count at most {bound} and" in design
    assert f"A REST step passes through {bound} files before the grader" in design
    assert f"path to the grader is held at {bound} files" in design


def test_the_path_is_the_stack_and_the_stages_it_calls() -> None:
    """The count: files on the stack at the grader call (from the route down), and the
    files they call into before it; a stage's own helpers are not counted."""
    route, store, episode, grader = (
        step_path.ROUTE,
        "server/store/episode_store.py",
        "e.py",
        "grading/g.py",
    )
    calls = [
        ("server/metrics.py", None, ()),
        (route, "server/metrics.py", ("server/metrics.py",)),
        (store, route, ("server/metrics.py", route)),
        (
            "server/processes/affinity.py",
            store,
            ("server/metrics.py", route, store),
        ),  # a store's helper
        (episode, route, ("server/metrics.py", route)),
        ("table/values.py", "operations/fill.py", (route, episode, "operations/fill.py")),
        ("operations/fill.py", episode, ("server/metrics.py", route, episode)),
        (grader, episode, ("server/metrics.py", route, episode)),
    ]
    assert step_path.path_to_grader(calls) == [route, store, episode, "operations/fill.py"]
    assert step_path.files_touched(calls) == [
        route, store, "server/processes/affinity.py", episode, "table/values.py", "operations/fill.py",
    ]  # fmt: skip
