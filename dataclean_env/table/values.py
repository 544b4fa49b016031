"""Canonical forms shared by operations and graders: column kinds, lenient numbers, names.

One definition of "is this a number", "what kind is this column" and "are these two cells
equal" keeps the operations and the grader from disagreeing.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd


class _Missing:
    """One marker for NaN, None and NaT in snapshots, so missing cells compare equal."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


class Kind(StrEnum):
    """The coarse type of a column, as the engine reads a table and as a task declares it.

    A member equals its string ("int" == Kind.INT) and serialises as it, so observations,
    task files and logs hold the same text as before the type existed."""

    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    DATETIME = "datetime"
    STR = "str"


NUMERIC_KINDS = frozenset({Kind.INT, Kind.FLOAT})
# Up to this many cells, plain-Python statistics beat numpy's fixed cost per call; above
# it, whole-column numpy wins (the original tasks' columns are far below, 100k-row ones above).
SMALL_COLUMN = 1024
# Past this a float no longer holds every whole number (a cast would lose digits).
EXACT_INT = 2**53
# Reading a member off an Enum class costs ~100 ns on Python 3.11 (a module global ~10):
# the per-cell comparisons below read these instead.
_BOOL, _DATETIME = Kind.BOOL, Kind.DATETIME

# "$1,234.50", "€ 99", "1,000" -> plain numbers. Commas count only as thousands separators.
_CURRENCY = re.compile(r"^\s*[$€£]\s*|\s*[$€£]\s*$|(?<=^[+-])[$€£]")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?$")
_TRUE = {"true", "yes", "y", "t", "1"}
_FALSE = {"false", "no", "n", "f", "0"}
# Numbers equal at two decimals count as equal (fills are rounded to two decimals at most).
NUMBER_TOLERANCE = 0.005


# Keyed by (dtype class, name): hashing a pandas extension dtype itself (StringDtype, say)
# costs microseconds, and kind_of runs for every column of every table version.
_KINDS: dict[tuple[type, str], Kind] = {}


def kind_of(dtype: Any) -> Kind:
    """The coarse kind of a pandas dtype: int, float, bool, datetime or str."""
    key = (type(dtype), dtype.name)
    kind = _KINDS.get(key)
    if kind is None:
        kind = _KINDS[key] = _classify(dtype)
    return kind


def _classify(dtype: Any) -> Kind:
    if pd.api.types.is_bool_dtype(dtype):
        return Kind.BOOL
    if pd.api.types.is_integer_dtype(dtype):
        return Kind.INT
    if pd.api.types.is_float_dtype(dtype):
        return Kind.FLOAT
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return Kind.DATETIME
    return Kind.STR


_DTYPE_NAMES = {
    Kind.INT: "int64",
    Kind.FLOAT: "float64",
    Kind.BOOL: "bool",
    Kind.DATETIME: "datetime64",
    Kind.STR: "object",
}


def dtype_name(dtype: Any) -> str:
    """A stable, version-independent dtype label for observations."""
    return _DTYPE_NAMES[kind_of(dtype)]


def parse_number(value: Any) -> float | None:
    """A finite float for a number or a number-like string ("$1,200.50"), else None."""
    if value.__class__ is str:  # the common case first; a short text's number is cached
        return _text_number(value) if len(value) <= CACHED_TEXT else _text_number.__wrapped__(value)
    if value is None or isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
        return number if math.isfinite(number) else None
    if not isinstance(value, str):
        return None
    return _text_number(value) if len(value) <= CACHED_TEXT else _text_number.__wrapped__(value)


# Cells repeat from step to step (and in every grade): parsing each distinct text once
# saves two regular expressions per cell. Only short texts (numbers and dates are short)
# are cached, so that long texts an agent writes cannot fill the caches' memory.
CACHED_TEXT = 64


@lru_cache(maxsize=65536)
def _text_number(value: str) -> float | None:
    text = _CURRENCY.sub("", value.strip())
    if _THOUSANDS.match(text):
        text = text.replace(",", "")
    try:
        number = float(text)
    except ValueError:
        return None
    # float() also reads "nan", "inf" and "1_000": none of those is a number in a table.
    if not math.isfinite(number) or "_" in text:
        return None
    return number


def numbers_in(
    values: list[Any], kind: Kind, max_bad: int | None = None
) -> tuple[np.ndarray, list[Any]]:
    """(float array with NaN for missing cells, present values that are not numbers) of a
    column given as a snapshot list (missing cells are `MISSING`) and its kind. Stops
    after `max_bad` values that are not numbers (enough to say which ones)."""
    if kind in NUMERIC_KINDS:
        return np.array([np.nan if v is MISSING else v for v in values], dtype=float), []
    if kind != _BOOL:
        parsed = _text_numbers(values)
        if parsed is not None:
            return parsed, []
    positions, parsed_numbers, bad = _parse_present(values, kind, max_bad)
    numbers = np.full(len(values), np.nan)
    numbers[positions] = parsed_numbers
    return numbers, bad


def _parse_present(
    values: list[Any], kind: Kind, max_bad: int | None
) -> tuple[list[int], list[float], list[Any]]:
    """(positions, numbers, bad) of the present cells of a column that is not numeric: each
    text read by `parse_number` (a bool column holds no numbers); stops after `max_bad`."""
    positions: list[int] = []
    numbers: list[float] = []
    bad = []
    for i, value in enumerate(values):
        if value is MISSING:
            continue
        number = parse_number(value) if kind != _BOOL else None
        if number is None:
            bad.append(value)
            if max_bad is not None and len(bad) >= max_bad:
                break
        else:
            positions.append(i)
            numbers.append(number)
    return positions, numbers, bad


def _text_numbers(values: list[Any]) -> np.ndarray | None:
    """What the per-cell loop of `numbers_in` gives for a column of text and missing cells
    when every text is a plain decimal number, else None (the loop then decides).

    Each distinct text is read once by `float`, in C. A text `float` accepts holds no
    currency sign and no comma, so `parse_number` reads it the same way, unless it is
    nan/inf or holds "_": those go back to the loop."""
    if not set(map(type, values)) <= {str, _Missing}:
        return None
    texts = set(values)
    texts.discard(MISSING)
    distinct = list(texts)
    try:
        floats = list(map(float, distinct))
    except ValueError:
        return None
    if not all(map(math.isfinite, floats)) or "_" in "".join(distinct):
        return None
    number_of = dict(zip(distinct, floats, strict=True))
    number_of[MISSING] = math.nan
    return np.array(list(map(number_of.__getitem__, values)), dtype=float)


def present_numbers(
    values: list[Any], kind: Kind, max_bad: int | None = None
) -> tuple[list[float], list[Any]]:
    """`numbers_in` as plain lists: the floats of the present cells, in order, and the
    present values that are not numbers (at most `max_bad` of them, then it stops)."""
    if kind in NUMERIC_KINDS:
        return [float(v) for v in values if v is not MISSING], []
    _, numbers, bad = _parse_present(values, kind, max_bad)
    return numbers, bad


def parse_bool(value: Any) -> bool | None:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, str):
        token = value.strip().lower()
        if token in _TRUE:
            return True
        if token in _FALSE:
            return False
    if isinstance(value, int | np.integer) and value in (0, 1):
        return bool(value)
    return None


def parse_date(value: Any) -> pd.Timestamp | None:
    if isinstance(value, pd.Timestamp):
        return None if pd.isna(value) else value
    if isinstance(value, str) and _ISO_DATE.match(value.strip()):
        try:
            return pd.Timestamp(value.strip())
        except ValueError:
            return None
    return None


def is_iso_date(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    return _iso_text(value) if len(value) <= CACHED_TEXT else _iso_text.__wrapped__(value)


@lru_cache(maxsize=65536)
def _iso_text(value: str) -> bool:
    return bool(_ISO_DATE.match(value.strip()))


def all_iso_dates(values: list[Any]) -> bool:
    """`all(is_iso_date(v) for v in values)`, asking once per distinct value (a large
    column of dates repeats its values)."""
    try:
        distinct = set(values)
    except TypeError:  # an unhashable cell: ask cell by cell
        return all(map(is_iso_date, values))
    return all(map(is_iso_date, distinct))


def is_missing(value: Any) -> bool:
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def cells_equal(current: Any, gold: Any, kind: Kind) -> bool:
    """Exact equality after canonicalisation to the gold column's kind; never fuzzy."""
    if is_missing(gold):
        return is_missing(current)
    if is_missing(current):
        return False
    if kind in NUMERIC_KINDS:
        number = parse_number(current)
        return number is not None and abs(number - float(gold)) <= NUMBER_TOLERANCE
    if kind == _BOOL:
        return parse_bool(current) == bool(gold)
    if kind == _DATETIME:
        stamp = parse_date(current)
        return stamp is not None and stamp == pd.Timestamp(gold)
    return str(current) == str(gold)


def snake_case(name: str) -> str:
    """'EMP ID ' -> 'emp_id', 'SalesAmount' -> 'sales_amount', 'DEP T' -> 'dep_t'."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.strip())
    return re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower()


def json_cell(value: Any) -> Any:
    """A JSON-safe rendering of one cell; missing is shown as "NULL". Common types first:
    this runs for every sample cell of every observation."""
    if value is MISSING or value is None:
        return "NULL"
    kind = type(value)
    if kind is str or kind is int:
        return value
    if kind is float:
        return value if value == value else "NULL"
    if isinstance(value, pd.Timestamp):
        if value is pd.NaT:
            return "NULL"
        return (
            value.isoformat() if (value.hour or value.minute or value.second) else str(value.date())
        )
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value) if value == value else "NULL"
    return "NULL" if is_missing(value) else str(value)
