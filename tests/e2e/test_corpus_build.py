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
        "planes: 3322 rows, 39 layers, 5967 cells",
        "airports: 1458 rows, 36 layers, 2588 cells",
        "weather: 2155 rows, 69 layers, 7117 cells",
        "flights: 2699 rows, 87 layers, 11628 cells",
        "gapminder: 1704 rows, 28 layers, 2380 cells",
        "seattle_weather: 1461 rows, 26 layers, 1898 cells",
    ]
