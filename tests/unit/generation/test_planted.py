"""Planted errors (`dataclean_env/generation/planted.py`)."""

from __future__ import annotations

import random

from dataclean_env.generation.planted import _out_of_range


def test_an_out_of_range_date_of_29_february_is_a_valid_date() -> None:
    """None of the out-of-range years is a leap year: 29 February became a crash of the
    draw (a secret error_detection or audit_pipeline instance could not be made)."""
    make = _out_of_range("hire_date")
    assert [make(random.Random(seed), "2024-02-29", {}) for seed in range(3)] == [
        "2099-02-28",
        "1899-02-28",
        "1899-02-28",
    ]
    assert make(random.Random(0), "2021-03-31", {}) == "2099-03-31"  # other days unchanged
