"""The benchmark's suites (`suites/suites.json`): what a ranked run plays.

A suite is a fixed composition: for each family (every generated cleaning family, every
claims family and the real-table corpus, one family over its tables) and each of its difficulties, `per_cell` instances, drawn afresh for each run
from the secret split (a random 62-bit index per instance, redrawn until the instance has
the cell's difficulty), so no instance can be probed across runs. The fixed tasks are the
tutorial track: never in a suite.
"""

from __future__ import annotations

import json
import random
import secrets as random_source
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from dataclean_env.generation import secret_rng
from dataclean_env.generation.noise import pick_difficulty
from dataclean_env.tasks.claim_families import GENERATED as CLAIMS_FAMILIES
from dataclean_env.tasks.claim_families import secret_claims_task
from dataclean_env.tasks.corpus import SUITE_FAMILY as CORPUS
from dataclean_env.tasks.corpus import secret_suite_task, suite_table
from dataclean_env.tasks.generated import FAMILIES, secret_task
from dataclean_env.tasks.registry import Task

DEFINITION = Path(__file__).resolve().parent / "suites" / "suites.json"
INDEX_BITS = 62  # a secret instance's index is drawn from this many random bits


@dataclass(frozen=True)
class Cell:
    family: str
    difficulty: str


@dataclass(frozen=True)
class Suite:
    name: str  # "full" or "lite"
    version: str  # on every record and on the board's title
    families: tuple[str, ...]
    difficulties: tuple[str, ...]
    per_cell: int
    # (family, instances per cell) where a family's cells hold another number: a corpus
    # episode costs about ten generated ones to play (tables of thousands of rows)
    per_cell_of: tuple[tuple[str, int], ...] = ()

    @property
    def cells(self) -> list[Cell]:
        return [Cell(f, d) for f in self.families for d in self.difficulties]

    def instances_per_cell(self, family: str) -> int:
        return dict(self.per_cell_of).get(family, self.per_cell)

    @property
    def episodes(self) -> int:
        return sum(self.instances_per_cell(cell.family) for cell in self.cells)

    def draw(self, secret: bytes, rng: random.Random | None = None) -> list[tuple[Cell, int]]:
        """(cell, secret index) of each of the suite's episodes, in cell order."""
        bits = rng.getrandbits if rng is not None else random_source.randbits
        drawn = []
        for cell in self.cells:
            for _ in range(self.instances_per_cell(cell.family)):
                index = bits(INDEX_BITS)
                while secret_difficulty(cell.family, secret, index) != cell.difficulty:
                    index = bits(INDEX_BITS)
                drawn.append((cell, index))
        return drawn


@cache
def suites() -> dict[str, Suite]:
    data = json.loads(DEFINITION.read_text(encoding="utf-8"))
    families = tuple(data["families"])
    return {
        name: Suite(
            name,
            s["version"],
            families,
            tuple(s["difficulties"]),
            s["per_cell"],
            tuple(sorted(s.get("per_cell_of", {}).items())),
        )
        for name, s in data["suites"].items()
    }


def suite_named(name: str) -> Suite:
    return suites()[name]


def suite_of_version(version: str) -> Suite | None:
    return next((s for s in suites().values() if s.version == version), None)


def is_family(family: str) -> bool:
    return family in FAMILIES or family in CLAIMS_FAMILIES or family == CORPUS


def secret_instance(family: str, secret: bytes, index: int) -> Task:
    """Instance `index` of a family's secret split: a cleaning, claims or corpus family."""
    if family in FAMILIES:
        return secret_task(family, secret, index)
    if family == CORPUS:
        return secret_suite_task(secret, index)
    return secret_claims_task(family, secret, index)


def secret_difficulty(family: str, secret: bytes, index: int) -> str:
    """The difficulty of a secret instance without generating it: every generator, cleaning,
    claims or corpus, draws its difficulty first (a test holds each family to this)."""
    stream = suite_table(index) if family == CORPUS else family
    return pick_difficulty(secret_rng(secret, stream, index))[0]
