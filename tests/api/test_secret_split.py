"""The secret split, swept: a secret instance is none of the public ones (60 instances drawn;
the split's own rules are in tests/unit/generation/test_secret_split.py)."""

from __future__ import annotations

from dataclean_env.generation import SPLITS
from dataclean_env.tasks.generated import instance, secret_task
from tests.unit.generation.test_secret_split import SECRET


def test_secret_instances_are_not_public_ones() -> None:
    secret = secret_task("orders", SECRET, 0).dirty
    for split in SPLITS:
        for seed in range(20):
            assert not instance("orders", split, seed)[1].dirty.equals(secret)
