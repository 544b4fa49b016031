"""Fixtures for every tier. Nothing here imports the web stack, so the unit tier
(`pytest tests/unit`) starts in seconds; `tests/web.py` holds the app fixtures.

Tiers, by folder: `unit` (the engine, in-process, each test quick), `api` (the app through a
TestClient or a live uvicorn, and in-process sweeps: many episodes, real tables, property
tests with many examples), `e2e` (subprocesses, validators, browsers, databases, training stacks;
marked `e2e`, so `-m "not e2e"` leaves them out of an inner loop).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry, default_registry
from dataclean_env.tasks.fixed import load_metadata
from tests.support import need
from tests.tools import TOOLS, missing

TIERS = ("unit", "api", "e2e")
TESTS = Path(__file__).resolve().parent
# Never the checkout's leaderboard database: servers the tests start (also in subprocesses,
# which inherit this) write to a scratch one unless a test names its own.
os.environ.setdefault(
    "DCE_LEADERBOARD_DB", str(Path(tempfile.mkdtemp(prefix="dce-tests-")) / "leaderboard.sqlite3")
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        # The tier is the folder under tests/ (tests/unit/engine/test_x.py is a unit test).
        path = item.path.resolve()
        tier = path.relative_to(TESTS).parts[0] if path.is_relative_to(TESTS) else None
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"needs(tool): the test needs an optional tool, one of {sorted(TOOLS)}"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a test whose optional tool is missing here (fail it under CI), before its
    fixtures start anything."""
    for mark in item.iter_markers("needs"):
        (tool,) = mark.args
        why = missing(tool)
        need(why is None, why or "")


@pytest.fixture(scope="session")
def registry() -> TaskRegistry:
    return default_registry()


@pytest.fixture(scope="session")
def metadata() -> dict[str, dict]:
    """task_id -> its entry in datasets/task_metadata.json (with its solution)."""
    return {entry["task_id"]: entry for entry in load_metadata(Settings().datasets_dir)}


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """Say the order's seed at the end (pytest-randomly's header line is hidden by -q), so a
    failing order can be run again with `--randomly-seed=N`."""
    seed = getattr(config.option, "randomly_seed", None)
    if seed is not None:
        terminalreporter.write_line(f"random order: --randomly-seed={seed}")
