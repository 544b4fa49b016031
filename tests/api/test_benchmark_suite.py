"""The benchmark suite: its composition, its draw, the normalised score, the measured width."""

from __future__ import annotations

import json
import random

import pytest

from dataclean_env.benchmark import measure
from dataclean_env.benchmark.normalised import Anchors, anchors
from dataclean_env.benchmark.stats import bootstrap_interval
from dataclean_env.benchmark.suite import (
    Cell,
    secret_difficulty,
    secret_instance,
    suite_named,
    suites,
)
from dataclean_env.tasks import corpus
from dataclean_env.tasks.claim_families import GENERATED as CLAIMS_FAMILIES
from dataclean_env.tasks.generated import FAMILIES

SECRET = b"test-suite-secret"


def test_the_suites_cover_every_cleaning_and_claims_family_and_the_corpus() -> None:
    full, lite = suite_named("full"), suite_named("lite")
    assert set(full.families) == set(FAMILIES) | set(CLAIMS_FAMILIES) | {"corpus"}
    assert full.difficulties == ("easy", "medium", "hard")
    assert (full.per_cell, full.instances_per_cell("corpus")) == (28, 8)
    assert full.episodes == 9 * 3 * 28 + 3 * 8 == 780
    assert lite.episodes == 10 and lite.version != full.version
    assert "fixed" not in {s.name for s in suites().values()}


@pytest.mark.parametrize("family", [*FAMILIES, *CLAIMS_FAMILIES, "corpus"])
def test_the_predicted_difficulty_is_the_instance_difficulty(family: str) -> None:
    for index in range(6):
        task = secret_instance(family, SECRET, index)
        assert secret_difficulty(family, SECRET, index) == task.spec.difficulty


def test_the_corpus_family_draws_every_table_alike_from_its_secret_split() -> None:
    tables = [secret_instance("corpus", SECRET, index).spec.task_id for index in range(12)]
    assert tables == [*corpus.TASK_IDS, *corpus.TASK_IDS]  # index modulo the six tables
    ours = secret_instance("corpus", SECRET, 7)
    assert (ours.split, ours.seed, ours.spec.family) == ("secret", None, "corpus")
    same = corpus.secret_task(corpus.TASK_IDS[1], SECRET, 7)
    assert ours.dirty.equals(same.dirty)
    assert not ours.dirty.equals(secret_instance("corpus", b"another-secret", 7).dirty)


def test_a_draw_fills_every_cell_with_its_difficulty() -> None:
    drawn = suite_named("lite").draw(SECRET, random.Random(3))
    assert [c.family for c, _ in drawn] == list(suite_named("lite").families)
    for cell, index in drawn:
        assert secret_instance(cell.family, SECRET, index).spec.difficulty == cell.difficulty
    again = suite_named("lite").draw(SECRET)
    assert {i for _, i in again}.isdisjoint({i for _, i in drawn})


def test_do_nothing_normalises_to_0_and_the_oracle_to_1_on_every_lite_instance() -> None:
    for cell, index in suite_named("lite").draw(SECRET, random.Random(5)):
        marks = anchors(lambda cell=cell, index=index: secret_instance(cell.family, SECRET, index))
        assert marks.oracle > marks.do_nothing, cell
        assert marks.normalise(marks.do_nothing) == 0.0
        assert marks.normalise(marks.oracle) == 1.0


def test_the_normalised_score_is_the_share_of_the_reachable_repair_clipped() -> None:
    marks = Anchors(do_nothing=0.4, oracle=0.9)
    assert marks.normalise(0.65) == pytest.approx(0.5)
    assert marks.normalise(0.1) == 0.0 and marks.normalise(1.0) == 1.0
    # unclipped, a loss shows: the report puts this mean beside the clipped one
    assert marks.unclipped(0.1) == pytest.approx(-0.6)
    assert marks.unclipped(0.65) == pytest.approx(0.5)


def test_the_measured_interval_names_this_definition_and_replays() -> None:
    stored = json.loads(measure.INTERVAL.read_text(encoding="utf-8"))
    assert stored["definition_digest"] == measure.definition_digest()
    assert stored["suite_version"] == suite_named("full").version
    assert stored["episodes"] == suite_named("full").episodes == len(stored["scores"])
    scores = [s for *_, s in stored["scores"]]
    low, high = bootstrap_interval(scores)
    assert (round(low, 4), round(high, 4)) == (stored["ci_low"], stored["ci_high"])
    by_family: dict[str, list] = {}
    for row in stored["scores"]:
        by_family.setdefault(row[0], []).append(row)
    for family, difficulty, index, score in (rows[0] for rows in by_family.values()):
        assert difficulty in suite_named("full").difficulties
        assert measure.normalised_heuristic(Cell(family, difficulty), int(index)) == score
