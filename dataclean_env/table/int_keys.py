"""Integer key columns, read in numpy: the row keys `key_text` would give, without calling
it once per row.

`key_text` reads a key as a number, so an int key's text is `str(key)` as long as a float
holds the key exactly (|key| <= 2**53); and a key text can only be an int key's text if it
is an integer's own text ("12", not "012", "+12" or "12.0"). Past 2**53, or for keys that
are not all ints, callers fall back to `key_text` per row.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from dataclean_env.table.values import EXACT_INT

_INTEGER = re.compile(r"-?[0-9]+")


def int_keys(keys: list[Any]) -> np.ndarray | None:
    """The keys as an int64 array when every one is a Python int within ±2**53, else None."""
    if not set(map(type, keys)) <= {int}:
        return None
    try:
        array = np.array(keys, dtype=np.int64)
    except OverflowError:
        return None
    if array.size and (array.min() < -EXACT_INT or array.max() > EXACT_INT):
        return None
    return array


def integer_of(text: str | None) -> int | None:
    """The int whose own text `text` is ("12" -> 12; "012", "12.0", "-0" -> None)."""
    if text is None or not _INTEGER.fullmatch(text):
        return None
    number = int(text)
    return number if str(number) == text and abs(number) <= EXACT_INT else None
