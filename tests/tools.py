"""The optional tools some tests need, in one place: how each is found, and the script of
`.ci/` that installs it. A test names its tool with `@pytest.mark.needs("haproxy")` (or a
module's `pytestmark`); without the tool it skips with the reason below (`pytest -rs` lists
them), except under CI (`CI=true`), whose `.ci/run` must have installed every one.

Each tool is found the way a fresh machine would find it: programs on PATH, the
PostgreSQL cluster on its port, the venvs and axe-core where their scripts put them.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The TRL, verifiers, Raha and corpus-build venvs that .ci/setup-training.sh,
# .ci/setup-raha.sh and .ci/setup-corpus.sh build (outside the checkout).
TRAINING_VENVS = Path(
    os.environ.get("DCE_TRAINING_VENVS", Path.home() / ".cache" / "data-cleaning-openenv")
)
TRL_PYTHON = TRAINING_VENVS / "trl" / "bin" / "python"
VF_EVAL = TRAINING_VENVS / "verifiers" / "bin" / "vf-eval"
RAHA_PYTHON = TRAINING_VENVS / "raha" / "bin" / "python"
CORPUS_PYTHON = TRAINING_VENVS / "corpus" / "bin" / "python"
# The cluster .ci/setup-postgres.sh runs.
PG_URL = os.environ.get(
    "DCE_TEST_DATABASE_URL", "postgresql://dce_test:dce_test@127.0.0.1:54329/dce_test"
)


def axe_script() -> Path | None:
    """axe-core's script, as .ci/setup-browser.sh unpacks it into .cache/."""
    found = sorted(ROOT.glob(".cache/axe-core-*/axe.min.js"))
    return found[-1] if found else None


def chromium() -> str | None:
    return shutil.which("chromium")


def postgres_bin() -> Path | None:
    """The folder of PostgreSQL's server programs (initdb, pg_ctl): on PATH, or where Debian's
    postgresql package puts them when its cluster tools (pg_ctlcluster) are on PATH."""
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    if shutil.which("pg_ctlcluster"):
        folders = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
        return folders[-1].parent if folders else None
    return None


def _postgres_answers() -> bool:
    import psycopg

    try:
        with psycopg.connect(PG_URL, connect_timeout=3):
            return True
    except psycopg.Error:
        return False


@dataclass(frozen=True)
class Tool:
    found: Callable[[], object]
    why: str


TOOLS = {
    "haproxy": Tool(
        lambda: shutil.which("haproxy"), "HAProxy is not on PATH (.ci/setup-balancer.sh)"
    ),
    "chromium": Tool(chromium, "Debian's chromium is not on PATH (.ci/setup-browser.sh)"),
    "axe-core": Tool(axe_script, "axe-core is not in .cache/ (.ci/setup-browser.sh)"),
    "postgres": Tool(
        _postgres_answers, f"no PostgreSQL server answers at {PG_URL} (.ci/setup-postgres.sh)"
    ),
    "postgres-bin": Tool(
        postgres_bin, "PostgreSQL's server programs are not installed (.ci/setup-postgres.sh)"
    ),
    "trl": Tool(TRL_PYTHON.exists, f"no TRL venv at {TRL_PYTHON} (.ci/setup-training.sh)"),
    "verifiers": Tool(VF_EVAL.exists, f"no verifiers venv at {VF_EVAL} (.ci/setup-training.sh)"),
    "raha": Tool(RAHA_PYTHON.exists, f"no Raha venv at {RAHA_PYTHON} (.ci/setup-raha.sh)"),
    "corpus": Tool(
        CORPUS_PYTHON.exists, f"no corpus-build venv at {CORPUS_PYTHON} (.ci/setup-corpus.sh)"
    ),
}


@functools.cache
def missing(name: str) -> str | None:
    """Why the tool `name` is missing here, or None when it is available (asked once a run)."""
    tool = TOOLS[name]
    return None if tool.found() else tool.why
