"""The committed corpus (dataclean_env/corpus/tables) is what the build makes: tab-err in its
own venv (`.ci/setup-corpus.sh` builds it), run again from the pinned packages, writes the
same bytes (integrations/corpus/build_corpus.py --check)."""

from __future__ import annotations

import subprocess

import pytest

from tests.support import ROOT
from tests.tools import CORPUS_PYTHON

pytestmark = pytest.mark.needs("corpus")


def test_the_build_reproduces_the_committed_corpus() -> None:
    done = subprocess.run(
        [str(CORPUS_PYTHON), str(ROOT / "integrations" / "corpus" / "build_corpus.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "planes: 3322 rows, 50 layers, 11920 cells",
        "airports: 1458 rows, 44 layers, 4867 cells",
        "weather: 2155 rows, 73 layers, 12312 cells",
        "flights: 2699 rows, 94 layers, 20145 cells",
        "gapminder: 1704 rows, 34 layers, 4332 cells",
        "seattle_weather: 1461 rows, 30 layers, 3473 cells",
    ]
