"""The secret split (issue 10, section 5): instances seeded by HMAC of a server secret."""

from __future__ import annotations

import hashlib
import hmac
import random

import pandas as pd
import pytest

from dataclean_env.generation import instance_hash, secret_seed
from dataclean_env.tasks.generated import FAMILIES, instance, secret_task

SECRET = b"a-test-secret-of-some-length"


def test_the_seed_is_hmac_sha256_of_family_and_index() -> None:
    expected = hmac.new(SECRET, b"crm:7", hashlib.sha256).hexdigest()
    assert secret_seed(SECRET, "crm", 7) == expected
    assert len(expected) == 64


@pytest.mark.parametrize("family", list(FAMILIES))
def test_same_secret_and_index_give_the_same_instance(family: str) -> None:
    first, again = secret_task(family, SECRET, 3), secret_task(family, SECRET, 3)
    pd.testing.assert_frame_equal(first.dirty, again.dirty)
    assert first.spec.description == again.spec.description
    assert first.reference_plan == again.reference_plan
    assert (first.split, first.seed) == ("secret", None)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_another_secret_gives_another_instance(family: str) -> None:
    ours, theirs = secret_task(family, SECRET, 3), secret_task(family, b"another secret", 3)
    assert not ours.dirty.equals(theirs.dirty)


def test_the_instance_hash_names_the_instance_without_the_seed() -> None:
    seed = secret_seed(SECRET, "crm", 7)
    digest = instance_hash(seed)
    assert digest == hashlib.sha256(f"dce-instance:{seed}".encode()).hexdigest()[:32]
    assert seed not in digest and digest != instance_hash(secret_seed(SECRET, "crm", 8))


def test_public_splits_are_unchanged() -> None:
    # The refactor that made room for the secret split draws public instances as before.
    spec, generated, _ = instance("crm", "eval", 4)
    again = FAMILIES["crm"](random.Random("crm:13"))  # 3 * seed + the index of "eval"
    pd.testing.assert_frame_equal(generated.dirty, again.dirty)
    assert spec.description == again.description
