"""Whole-column fast paths equal the per-cell definitions they replace (issue 13, large
tables).

Each `reference_*` below is the per-cell code as it stood before the fast path (kept here
as the definition); hypothesis draws columns that mix the cases each fast path must either
handle exactly or hand back to the per-cell path: missing cells, numbers written with
currency signs, thousands commas, underscores, nan/inf, Unicode digits, whitespace, keys
past 2**53, repeated keys, keys the clean table lacks, dates with and without times, NaT.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dataclean_env.errors import InvalidText, OperationFailed
from dataclean_env.grading.cell_repair import CellRepairGrader, _text_column_counts
from dataclean_env.grading.cell_text import _LOST, ABSENT, _text_or_absent, _texts, cell_text
from dataclean_env.grading.gold_facts import key_text
from dataclean_env.operations.column_checks import _rewritten, _rewritten_cells
from dataclean_env.operations.dtypes import Column, to_datetime
from dataclean_env.operations.rows import _positions
from dataclean_env.table.limits import _text_chars
from dataclean_env.table.snapshot import Snapshot, _cells
from dataclean_env.table.values import (
    MISSING,
    Kind,
    all_iso_dates,
    is_iso_date,
    numbers_in,
    parse_number,
)

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ── the per-cell definitions ──────────────────────────────────────────────────
def reference_numbers_in(
    values: list[Any], kind: str, max_bad: int | None = None
) -> tuple[np.ndarray, list[Any]]:
    if kind in ("int", "float"):
        return np.array([np.nan if v is MISSING else v for v in values], dtype=float), []
    numbers = np.full(len(values), np.nan)
    bad = []
    for i, value in enumerate(values):
        if value is MISSING:
            continue
        number = parse_number(value) if kind != "bool" else None
        if number is None:
            bad.append(value)
            if max_bad is not None and len(bad) >= max_bad:
                break
        else:
            numbers[i] = number
    return numbers, bad


def reference_align(grader: CellRepairGrader, keys: list[Any]) -> tuple[tuple, Counter]:
    first: dict[str, int] = {}
    extra: Counter = Counter()
    for position, value in enumerate(keys):
        key = None if value is MISSING else key_text(value)
        if key is None or key in first or key not in grader.gold_keys:
            extra[key] += 1
        else:
            first[key] = position
    return tuple(first.get(k) for k in grader.clean_keys), extra


def reference_duplicate_mask(snapshot: Snapshot, subset: list[str] | None) -> list[bool]:
    columns = subset or list(snapshot.columns)
    seen: set[tuple[Any, ...]] = set()
    mask = []
    for row in zip(*(snapshot.values[c] for c in columns), strict=True):
        mask.append(row in seen)
        seen.add(row)
    return mask if columns else [i > 0 for i in range(snapshot.n_rows)]


def reference_cells(series: pd.Series) -> list[Any]:
    values = series.tolist()
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return values
    return [MISSING if v is None or v is pd.NA or v != v else v for v in values]


def reference_text_chars(values: list[Any]) -> tuple[int, int] | None:
    """None: InvalidText (a lone surrogate)."""
    texts = [v for v in values if v.__class__ is str]
    if not texts:
        return 0, 0
    joined = "\x00".join(texts)
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return len(joined) - len(texts) + 1, max(map(len, texts))


def reference_to_datetime(values: list[Any]) -> pd.Series | None:
    present = [v for v in values if v is not MISSING]
    if [v for v in present if not is_iso_date(v)]:
        return None
    texts = ["NaT" if v is MISSING else str(v).strip() for v in values]
    try:
        return pd.Series(np.array(texts, dtype="datetime64[ns]"))
    except ValueError:
        return None


# ── what the columns hold ─────────────────────────────────────────────────────
NUMBER_TEXTS = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    st.sampled_from(
        [
            " 12 ",
            "$1,200.50",
            "€ 99",
            "1,000",
            "1_000",
            "nan",
            "inf",
            "-inf",
            "1e400",
            "١٢",
            "0x10",
            "",
            "  ",
            "+5",
            "1e5",
            ".5",
            "5.",
            "12\n",
            "abc",
            "$",
            "-$3",
        ]
    ),
)
TEXT_CELLS = st.one_of(NUMBER_TEXTS, st.just(MISSING))
ANY_CELLS = st.one_of(
    TEXT_CELLS, st.integers(-5, 5), st.floats(-3, 3, allow_nan=False), st.booleans()
)
DATE_TEXTS = st.one_of(
    st.dates().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}"),
    st.sampled_from(
        [
            "2024-02-30",
            "2024-01-01 10:30",
            "2024-01-01T10:30:15",
            " 2024-03-01 ",
            "2024-1-1",
            "24-01-01",
            "2024-01-01\n",
            "2024-01-01\n2024-01-02",
            "NaT",
            "",
        ]
    ),
)


def columns_of(cells: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    # Repeats make the distinct-value paths do their work; short lists the edge cases.
    return st.lists(cells, max_size=40).flatmap(
        lambda base: st.lists(st.sampled_from(base), max_size=60) if base else st.just([])
    )


# ── values.py ─────────────────────────────────────────────────────────────────
@SETTINGS
@given(
    columns_of(ANY_CELLS),
    st.sampled_from(["str", "bool", "datetime"]),
    st.sampled_from([None, 1, 3]),
)
def test_numbers_in_equals_the_per_cell_loop(
    values: list[Any], kind: str, max_bad: int | None
) -> None:
    numbers, bad = numbers_in(values, kind, max_bad=max_bad)
    expected, expected_bad = reference_numbers_in(values, kind, max_bad)
    np.testing.assert_array_equal(numbers, expected)
    assert bad == expected_bad


@SETTINGS
@given(columns_of(TEXT_CELLS))
def test_numbers_in_of_text_columns_equals_the_per_cell_loop(values: list[Any]) -> None:
    numbers, bad = numbers_in(values, "str")
    expected, expected_bad = reference_numbers_in(values, "str")
    np.testing.assert_array_equal(numbers, expected)
    assert bad == expected_bad


@SETTINGS
@given(columns_of(st.one_of(DATE_TEXTS, st.integers(0, 3), st.just(MISSING))))
def test_all_iso_dates_equals_asking_each_cell(values: list[Any]) -> None:
    assert all_iso_dates(values) == all(is_iso_date(v) for v in values)


# ── operations ────────────────────────────────────────────────────────────────
@SETTINGS
@given(columns_of(st.one_of(DATE_TEXTS, st.just(MISSING))))
def test_to_datetime_equals_the_per_cell_conversion(values: list[Any]) -> None:
    column = Column("d", values, Kind.STR)
    expected = reference_to_datetime(values)
    if expected is None:
        with pytest.raises(OperationFailed):
            to_datetime(column)
        return
    converted = to_datetime(column)
    assert converted is not None
    series = converted.series(pd.RangeIndex(len(values)), "d")
    pd.testing.assert_series_equal(series, expected, check_names=False)
    # The snapshot cells it hands on are the ones the Series holds (NaT as MISSING).
    assert converted.cells == [MISSING if v is pd.NaT else v for v in series.tolist()]


# ── snapshot.py ───────────────────────────────────────────────────────────────
SMALL = st.one_of(st.integers(0, 2), st.sampled_from(["a", "b"]), st.just(MISSING), st.just(1.0))


def text_snapshot(columns: tuple[str, ...], values: dict[str, list[Any]], rows: int) -> Snapshot:
    """A snapshot of object columns holding `values` (as `Snapshot.of` reads text columns)."""
    kinds, names = dict.fromkeys(columns, Kind.STR), dict.fromkeys(columns, "object")
    return Snapshot(columns, kinds, names, values, rows, dict.fromkeys(columns, np.dtype(object)))


@SETTINGS
@given(
    st.integers(1, 4).flatmap(
        lambda width: st.lists(st.lists(SMALL, min_size=width, max_size=width), max_size=30).map(
            lambda rows, w=width: (w, rows)
        )
    ),
    st.booleans(),
)
def test_duplicate_mask_equals_hashing_every_row(
    shaped: tuple[int, list[list[Any]]], use_subset: bool
) -> None:
    width, rows = shaped
    columns = tuple(f"c{i}" for i in range(width))
    values = {c: [row[i] for row in rows] for i, c in enumerate(columns)}
    snapshot = text_snapshot(columns, values, len(rows))
    subset = list(columns[1:]) if use_subset and width > 1 else None
    assert snapshot.duplicate_mask(subset) == reference_duplicate_mask(snapshot, subset)


@SETTINGS
@given(st.lists(st.integers(0, 29), max_size=40), st.lists(SMALL, min_size=30, max_size=30))
def test_with_rows_equals_picking_each_row(keep: list[int], column: list[Any]) -> None:
    snapshot = text_snapshot(("a",), {"a": column}, 30)
    assert snapshot.with_rows(keep).values["a"] == [column[i] for i in keep]
    assert snapshot.with_rows(keep).n_rows == len(keep)


def assert_same_cells(got: list[Any], expected: list[Any]) -> None:
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert (a is MISSING) == (b is MISSING)
        if a is not MISSING:
            assert type(a) is type(b) and a == b and cell_text(a) == cell_text(b)


@SETTINGS
@given(
    st.lists(st.one_of(st.none(), st.floats(-1e3, 1e3, allow_nan=False)), max_size=40),
    st.lists(st.one_of(st.none(), st.text(max_size=3)), max_size=40),
    st.lists(st.one_of(st.none(), st.integers(0, 3), st.integers(0, 10**6)), max_size=60),
    st.sampled_from([None, "UTC", "Europe/Paris"]),
)
def test_snapshot_cells_equal_the_per_cell_read(
    floats: list[Any], texts: list[Any], stamps: list[Any], tz: str | None
) -> None:
    dates = pd.Series(
        pd.to_datetime([None if s is None else 1_700_000_000 + 3600 * s for s in stamps], unit="s")
    )
    if tz:
        dates = dates.dt.tz_localize(tz)
    for series in (
        pd.Series(floats, dtype="float64"),
        pd.Series(texts, dtype="str"),
        pd.Series(texts, dtype="string"),
        pd.Series(texts, dtype=object),
        dates,
        dates.astype("datetime64[ns]" if tz is None else f"datetime64[ns, {tz}]"),
    ):
        assert_same_cells(_cells(series), reference_cells(series))


# ── limits.py ─────────────────────────────────────────────────────────────────
@SETTINGS
@given(
    columns_of(ANY_CELLS),
    st.lists(st.sampled_from(["é", "日本", "\ud800", "a\udfffb"]), max_size=2),
)
def test_text_chars_equal_counting_each_text(values: list[Any], wide: list[str]) -> None:
    values = [*values, *wide]
    expected = reference_text_chars(values)
    if expected is None:
        with pytest.raises(InvalidText):
            _text_chars(values)
    else:
        assert _text_chars(values) == expected


# ── grading/cell_repair.py ────────────────────────────────────────────────────
KEYS = st.one_of(
    st.integers(-20, 20),
    st.integers(2**53 - 2, 2**53 + 2),
    st.integers(-(2**53) - 2, -(2**53) + 2),
    st.sampled_from(["7", "007", " 8", "x", "-0", "1.0", MISSING, 3.0, True]),
)
CLEAN_KEYS = st.one_of(
    st.integers(-20, 20).map(str),
    st.sampled_from(["007", "x", "-0", "1.0", str(2**53), str(2**53 + 1), str(-(2**53) - 1)]),
)


@SETTINGS
@given(
    st.lists(CLEAN_KEYS, min_size=1, max_size=25, unique_by=key_text),
    st.lists(KEYS, max_size=40),
    st.booleans(),
)
def test_alignment_equals_the_per_key_definition(
    clean_keys: list[str], keys: list[Any], only_ints: bool
) -> None:
    if only_ints:  # the numpy path's domain: int keys only
        keys = [k for k in keys if type(k) is int]
    clean = pd.DataFrame({"id": clean_keys, "v": ["a"] * len(clean_keys)})
    dirty = pd.DataFrame({"id": clean_keys, "v": ["b"] * len(clean_keys)})
    grader = CellRepairGrader(dirty, clean, "id", {"id": "id", "v": "v"})
    rows, extra = reference_align(grader, keys)
    alignment = grader._align(keys)
    assert alignment.rows == rows
    assert alignment.extra == extra
    assert alignment.lost == sum(1 for r in rows if r is None)
    assert alignment.identity == (rows == tuple(range(len(rows))))
    if rows:
        lost = [*range(len(keys)), _LOST]
        assert list(alignment.gather(lost)) == [_LOST if r is None else r for r in rows]


TYPED = {
    "str": st.one_of(st.text(max_size=3), st.sampled_from([" a ", "a", "1"])),
    "int": st.integers(-3, 3),
    "float": st.one_of(st.floats(-3, 3, allow_nan=False), st.sampled_from([0.0, -0.0, 1.5, 2.0])),
    "bool": st.booleans(),
    "datetime": st.sampled_from(
        [pd.Timestamp("2024-01-01"), pd.Timestamp("2024-01-01 10:00"), pd.Timestamp("2024-01-02")]
    ),
}


@SETTINGS
@given(
    st.sampled_from(sorted(TYPED)).flatmap(
        lambda kind: st.tuples(
            st.just(kind),
            columns_of(st.one_of(TYPED[kind], st.just(MISSING), st.just(_LOST))),
        )
    ),
    st.booleans(),
)
def test_cell_texts_equal_reading_each_cell(drawn: tuple[str, list[Any]], mixed: bool) -> None:
    kind, cells = drawn
    if mixed:  # a text column holding numbers too: the per-cell path
        cells = [*cells, 1, "1", 1.0, True]
    assert _texts(cells, kind) == [_text_or_absent(v) for v in cells]


@SETTINGS
@given(
    st.lists(st.sampled_from(["a", " a", "b", "", "c "]), min_size=1, max_size=20),
    st.data(),
)
def test_column_counts_equal_counting_each_cell(clean_texts: list[str], data: Any) -> None:
    n = len(clean_texts)
    dirty_texts = data.draw(st.lists(st.sampled_from(["a", "b", "x", ""]), min_size=n, max_size=n))
    clean = pd.DataFrame({"id": [str(i) for i in range(n)], "v": clean_texts})
    dirty = pd.DataFrame({"id": [str(i) for i in range(n)], "v": dirty_texts})
    grader = CellRepairGrader(dirty, clean, "id", {"id": "id", "v": "v"})
    column = grader.columns[0]
    keys = data.draw(st.lists(st.integers(-1, n), max_size=2 * n))
    values = data.draw(
        st.lists(
            st.one_of(st.sampled_from(["a", " b", "x", "c "]), st.just(MISSING), st.integers(0, 2)),
            min_size=len(keys),
            max_size=len(keys),
        )
    )
    alignment = grader._align(keys)
    changed = repaired = 0
    for i, row in enumerate(alignment.rows):
        text = ABSENT if row is None else cell_text(values[row])
        changed += text != column.dirty[i]
        repaired += i in column.errors and text == column.clean[i]
    assert _text_column_counts(column, values, "str", alignment) == (changed, repaired)


def test_an_integer_key_past_two_to_the_53_is_read_as_key_text_reads_it() -> None:
    """key_text reads a key as a float: 2**53 + 1 is the row of 2**53, as before."""
    big = 2**53
    clean = pd.DataFrame({"id": [str(big)], "v": ["a"]})
    grader = CellRepairGrader(clean, clean, "id", {"id": "id", "v": "v"})
    assert grader._align([big + 1]).rows == (0,)
    assert grader._align([big + 1]).rows == reference_align(grader, [big + 1])[0]
    assert math.isclose(float(big + 1), float(big))


# ── operations/rows.py ────────────────────────────────────────────────────────
def reference_positions(keys: list[Any]) -> dict[str | None, list[int]]:
    positions: dict[str | None, list[int]] = {}
    for i, value in enumerate(keys):
        positions.setdefault(key_text(value), []).append(i)
    return positions


@SETTINGS
@given(
    st.lists(KEYS, max_size=40),
    st.lists(st.one_of(KEYS, CLEAN_KEYS).filter(lambda k: k is not MISSING), max_size=8),
    st.booleans(),
)
def test_row_positions_equal_reading_every_key(
    keys: list[Any], row_ids: list[Any], only_ints: bool
) -> None:
    if only_ints:  # the numpy path's domain: int keys only
        keys = [k for k in keys if type(k) is int]
    wanted = {key_text(r) for r in row_ids}
    every = reference_positions(keys)
    expected = {text: rows for text, rows in every.items() if text in wanted}
    assert _positions(keys, wanted) == expected


# ── operations/column_checks.py ───────────────────────────────────────────────
@SETTINGS
@given(
    columns_of(st.one_of(st.sampled_from([" a", "b ", "c", " ", "", "Ab"]), st.just(MISSING))),
    st.sampled_from([str.strip, str.lower, str.upper]),
    st.lists(st.one_of(st.integers(0, 2), st.floats(0, 1)), max_size=2),
)
def test_text_rewrites_equal_rewriting_each_cell(
    cells: list[Any], method: Any, others: list[Any]
) -> None:
    cells = [*cells, *others]  # numbers in a text column: the per-cell path

    def rewrite(v: Any) -> Any:
        return method(v) if isinstance(v, str) else v

    expected = [v if v is MISSING else rewrite(v) for v in cells]
    got = _rewritten_cells(cells, rewrite, method)
    assert got == expected
    assert [v is MISSING for v in got] == [v is MISSING for v in expected]
    old_count = sum(1 for a, b in zip(cells, got, strict=True) if a is not b and a != b)
    table = pd.DataFrame(
        {"c": pd.Series([np.nan if v is MISSING else v for v in cells], dtype=object)}
    )
    series, count = _rewritten(table, "c", cells, got)
    assert count == old_count
    assert (series is None) == (old_count == 0)
