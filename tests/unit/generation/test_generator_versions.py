"""Generator versions: every family's current version has a committed digest, and the
generator still produces exactly that output (else bump the version on purpose)."""

from __future__ import annotations

import pytest

from dataclean_env.benchmark.suite import suites
from dataclean_env.benchmark.versions import SUITE_GENERATORS
from dataclean_env.corpus import instances
from dataclean_env.generation.digests import DIGESTS
from dataclean_env.tasks import claim_families, corpus
from dataclean_env.tasks.generated import (
    FAMILIES,
    GENERATOR_VERSIONS,
    MODULES,
    generator_digest,
    instance,
)
from tests.support import CORPUS_IDS, GENERATED_IDS

BUMP = (
    "what {family} generates changed: bump VERSION in dataclean_env/generation/{family}.py and "
    "add the new digest (uv run python scripts/generator_digests.py) to generation/digests.py"
)


def test_every_family_has_a_version_named_after_it() -> None:
    assert list(GENERATOR_VERSIONS) == GENERATED_IDS == list(FAMILIES)
    for family, version in GENERATOR_VERSIONS.items():
        assert version == f"{family}-v{MODULES[family].VERSION}"
        assert MODULES[family].VERSION >= 2  # v1 was the one-template generator
        assert f"{family}-v1" in DIGESTS  # the version older numbers were measured on


@pytest.mark.parametrize("family", GENERATED_IDS)
def test_the_generator_matches_its_committed_digest(family: str) -> None:
    version = GENERATOR_VERSIONS[family]
    assert version in DIGESTS, f"no digest recorded for {version}"
    assert generator_digest(family) == DIGESTS[version], BUMP.format(family=family)


def test_the_digest_sees_a_changed_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """A generator whose description gains one character no longer matches its digest."""
    original = FAMILIES["crm"]

    def edited(rng):
        made = original(rng)
        return type(made)(**{**made.__dict__, "description": made.description + "!"})

    monkeypatch.setitem(FAMILIES, "crm", edited)
    assert generator_digest("crm") != DIGESTS[GENERATOR_VERSIONS["crm"]]


def test_specs_and_tasks_name_the_version(registry) -> None:
    for family in GENERATED_IDS:
        assert registry.spec(family).version == GENERATOR_VERSIONS[family]
        assert registry.spec(family).public()["version"] == GENERATOR_VERSIONS[family]
        instance.cache_clear()
        assert registry.make(family, 3, "eval").spec.version == GENERATOR_VERSIONS[family]
    assert registry.spec("easy_dedup_rename").public()["version"] is None


CLAIMS_IDS = list(claim_families.GENERATED)
CLAIMS_BUMP = (
    "what {family} generates changed: bump its VERSIONS entry in dataclean_env/tasks/claim_families.py "
    "and add the new digest (uv run python scripts/generator_digests.py) to generation/digests.py"
)


def test_every_seeded_claims_family_has_a_version_named_after_it() -> None:
    assert list(claim_families.GENERATOR_VERSIONS) == CLAIMS_IDS
    for family, version in claim_families.GENERATOR_VERSIONS.items():
        assert version == f"{family}-v{claim_families.VERSIONS[family]}"


@pytest.mark.parametrize("family", CLAIMS_IDS)
def test_a_claims_generator_matches_its_committed_digest(family: str) -> None:
    version = claim_families.GENERATOR_VERSIONS[family]
    assert version in DIGESTS, f"no digest recorded for {version}"
    assert claim_families.generator_digest(family) == DIGESTS[version], CLAIMS_BUMP.format(
        family=family
    )


def test_the_claims_digest_sees_a_changed_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """An instruction that gains one character changes every instance's description."""
    monkeypatch.setitem(
        claim_families.INSTRUCTIONS, "detection", claim_families.INSTRUCTIONS["detection"] + "!"
    )
    assert claim_families.generator_digest("error_detection") != DIGESTS["error_detection-v1"]


def test_claims_specs_and_tasks_name_the_version(registry) -> None:
    for family in CLAIMS_IDS:
        version = claim_families.GENERATOR_VERSIONS[family]
        assert registry.spec(family).public()["version"] == version
        assert registry.make(family, 3, "eval").spec.version == version
    assert registry.spec("detection_showcase").public()["version"] is None


def test_the_suite_version_covers_every_generator_the_suites_play() -> None:
    played = {family for suite in suites().values() for family in suite.families}
    assert set(SUITE_GENERATORS) == played
    assert {
        **GENERATOR_VERSIONS,
        **claim_families.GENERATOR_VERSIONS,
        "corpus": f"corpus-v{instances.VERSION}",
    } == SUITE_GENERATORS


CORPUS_BUMP = (
    "what {task_id} composes changed: bump VERSION in dataclean_env/corpus/instances.py (or "
    "rebuild the corpus on purpose) and add the new digest (uv run python "
    "scripts/generator_digests.py) to generation/digests.py"
)


def test_every_corpus_table_has_a_version_named_after_it() -> None:
    assert list(corpus.GENERATOR_VERSIONS) == CORPUS_IDS[::2]
    for task_id, version in corpus.GENERATOR_VERSIONS.items():
        assert version == f"{task_id}-v{corpus.instances.VERSION}"


@pytest.mark.parametrize("task_id", CORPUS_IDS[::2])
def test_a_corpus_table_matches_its_committed_digest(task_id: str) -> None:
    version = corpus.GENERATOR_VERSIONS[task_id]
    assert version in DIGESTS, f"no digest recorded for {version}"
    assert corpus.generator_digest(task_id) == DIGESTS[version], CORPUS_BUMP.format(task_id=task_id)
