"""Versions stamped on every leaderboard record; one board per suite version.

Bump GRADER_VERSION when grading or an operation changes what a trace scores; a generator's
own VERSION (tasks.generated.GENERATOR_VERSIONS for the cleaning families,
tasks.claim_families.VERSIONS for the seeded claims families, corpus.instances.VERSION for the
corpus) when it changes what an instance holds;
the suite's version in benchmark/suites/suites.json when its composition changes. Each of
them changes the suite version (`suite_version`, the one place it is made), so a change
opens a new board; `dataclean-env-admin audit --rescore` then scores the stored runs again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from dataclean_env import __version__
from dataclean_env.tasks import claim_families, corpus
from dataclean_env.tasks.generated import GENERATOR_VERSIONS

SERVER_VERSION = __version__
# grader-2: a lost gold row costs every cell it held (audit), and the generated families'
# repair is net of the cells broken (every wrong cell costs what a fix earns).
# grader-3: detection is scaled by how far precision beats chance, and the audit's
# categories are scored by informedness, so claiming everything earns nothing; real
# tables' total is net repair ((repaired - wrong changes) / errors) instead of F1, so no
# damaging step pays there either.
GRADER_VERSION = "grader-3"
# Every generator a suite plays, cleaning, claims and the corpus (a test holds it to suites.json).
SUITE_GENERATORS: dict[str, str] = {
    **GENERATOR_VERSIONS,
    **claim_families.GENERATOR_VERSIONS,
    **corpus.SUITE_GENERATOR_VERSIONS,
}


def generator_version(versions: Mapping[str, str] = SUITE_GENERATORS) -> str:
    """One name for every generator's version at once."""
    text = json.dumps(dict(versions), sort_keys=True)
    return "gen-" + hashlib.sha256(text.encode()).hexdigest()[:8]


GENERATOR_VERSION = generator_version()


def suite_version(
    composition: str, grader: str = GRADER_VERSION, generator: str = GENERATOR_VERSION
) -> str:
    """The version a suite's board and its records carry, e.g. dce-suite-1+grader-3+gen-…"""
    return f"{composition}+{grader}+{generator}"
