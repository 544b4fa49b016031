"""Exact-value tests of every cleaning operation on small hand-made tables.

Each operation is applied directly (`resolve` + `op.apply`), as the episode does. Every
successful call is checked not to mutate its input, and every refused call is checked to
raise the right typed error and leave the input exactly as it was.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dataclean_env.errors import (
    EnvError,
    InvalidParameters,
    OperationFailed,
    UnknownOperation,
)
from dataclean_env.operations import (
    OpContext,
    OpResult,
    alias_names,
    canonical_name,
    get_operation,
    operation_names,
    resolve,
)
from dataclean_env.operations.claims import FIX_OPERATIONS, TRANSFORMS
from dataclean_env.table.values import kind_of

STRATEGIES = ["mean", "median", "mode", "ffill", "bfill", "constant"]
DTYPES = ["int", "float", "str", "bool", "datetime"]


def run(
    table: pd.DataFrame,
    name: str,
    parameters: dict[str, Any] | None = None,
    schema: dict[str, str] | None = None,
) -> OpResult:
    """Apply one operation and check that the input table was not touched."""
    before = table.copy(deep=True)
    columns = list(table.columns)
    op, params = resolve(name, parameters)
    result = op.apply(table, params, OpContext(target_schema=schema or {}))
    assert table.equals(before), f"{name} mutated its input"
    assert list(table.columns) == columns
    assert [kind_of(d) for d in table.dtypes] == [kind_of(d) for d in before.dtypes]
    return result


def refused(
    table: pd.DataFrame,
    name: str,
    parameters: dict[str, Any] | None,
    error: type[EnvError],
    schema: dict[str, str] | None = None,
) -> EnvError:
    """The operation is refused with `error` and the input table is left as it was."""
    before = table.copy(deep=True)
    columns = list(table.columns)
    with pytest.raises(error) as info:
        op, params = resolve(name, parameters)
        op.apply(table, params, OpContext(target_schema=schema or {}))
    assert table.equals(before), f"refused {name} mutated its input"
    assert list(table.columns) == columns
    return info.value


def kinds(table: pd.DataFrame) -> dict[str, str]:
    return {c: kind_of(d) for c, d in table.dtypes.items()}


def cells(series: pd.Series) -> list[Any]:
    """Plain values with missing cells as None, for exact list comparisons."""
    return [None if (not isinstance(v, str) and pd.isna(v)) else v for v in series.tolist()]


# ── registry ────────────────────────────────────────────────────────────────


def test_registered_operations_and_ranks() -> None:
    ranks = {name: get_operation(name).rank for name in operation_names()}
    assert ranks == {
        "remove_duplicates": 0,
        "dedupe": 0,
        "rename_columns": 1,
        "fill_missing": 2,
        "strip": 2,
        "lower": 2,
        "upper": 2,
        "title": 2,
        "replace": 2,
        "map": 2,
        "regex_replace": 2,
        "replace_missing": 2,
        "normalize_dates": 2,
        "phone_us": 2,
        "decimal2": 2,
        "fd_repair": 2,
        "program": 0,
        "fix_dtype": 3,
        "remove_outliers": 4,
        "clamp_outliers": 4,
        "drop_rows": 4,
        "set_cell": 2,
        "set_cells": 2,
        "show_rows": 5,
        "validate_schema": 5,
        "finish": 6,
        # the claim task kinds (only their own tasks allow them; no penalties there)
        "report_errors": 0,
        "standardise": 2,
        "audit": 0,
        "identify": 1,
        "fix": 2,
        "validate": 3,
        "value_counts": 5,
        "find_rows": 5,
        "label": 5,
        "query": 5,
        "sql": 2,
    }
    ending = [n for n in operation_names() if get_operation(n).ends_episode]
    assert ending == ["finish", "validate"]
    not_repeatable = [n for n in operation_names() if not get_operation(n).repeatable]
    assert not_repeatable == [
        "dedupe",
        "finish",
        "fix_dtype",
        "remove_duplicates",
        "remove_outliers",
        "rename_columns",
        "validate",
        "validate_schema",
    ]


def test_aliases_are_registered() -> None:
    fill = [f"fill_missing_{s}" for s in STRATEGIES]
    assert alias_names() == sorted([*fill, "cast_type", "integer"])
    for strategy in STRATEGIES:
        assert canonical_name(f"fill_missing_{strategy}") == "fill_missing"
    assert canonical_name("cast_type") == canonical_name("integer") == "fix_dtype"


@pytest.mark.parametrize("name", ["drop_everything", "", "FILL_MISSING", "fill_missing_avg"])
def test_unknown_operation_is_refused(name: str) -> None:
    table = pd.DataFrame({"a": [1, 2]})
    error = refused(table, name, {}, UnknownOperation)
    assert error.code == "UNKNOWN_OPERATION"


def test_unknown_operation_name_is_unknown_for_canonical_name() -> None:
    with pytest.raises(UnknownOperation):
        canonical_name("nope")


# ── remove_duplicates ───────────────────────────────────────────────────────


@pytest.fixture
def people() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [1, 2, 1, 3, 2, 4],
            "name": ["ann", "bob", "ann", "cy", "bo", "dee"],
            "score": [1.5, 2.0, 1.5, np.nan, 2.0, np.nan],
        }
    )


def test_remove_duplicates_drops_exact_repeats_keeping_first(people: pd.DataFrame) -> None:
    result = run(people, "remove_duplicates")
    table = result.table
    assert len(table) == 5
    assert table["id"].tolist() == [1, 2, 3, 2, 4]
    assert table["name"].tolist() == ["ann", "bob", "cy", "bo", "dee"]
    assert cells(table["score"]) == [1.5, 2.0, None, 2.0, None]
    assert table.index.tolist() == [0, 1, 2, 3, 4]
    assert kinds(table) == {"id": "int", "name": "str", "score": "float"}
    assert result.message == "Removed 1 duplicate rows (6 -> 5)."


def test_remove_duplicates_treats_missing_cells_as_equal() -> None:
    table = pd.DataFrame({"a": [1.0, np.nan, np.nan, 1.0], "b": ["x", None, None, "x"]})
    result = run(table, "remove_duplicates")
    assert len(result.table) == 2
    assert cells(result.table["a"]) == [1.0, None]
    assert cells(result.table["b"]) == ["x", None]
    assert result.message == "Removed 2 duplicate rows (4 -> 2)."


def test_remove_duplicates_subset(people: pd.DataFrame) -> None:
    result = run(people, "remove_duplicates", {"subset": ["id"]})
    assert result.table["id"].tolist() == [1, 2, 3, 4]
    assert result.table["name"].tolist() == ["ann", "bob", "cy", "dee"]
    assert result.message == "Removed 2 duplicate rows (6 -> 4)."


def test_remove_duplicates_subset_of_two_columns(people: pd.DataFrame) -> None:
    result = run(people, "remove_duplicates", {"subset": ["id", "score"]})
    # (2, 2.0) repeats with a different name; (1, 1.5) repeats exactly.
    assert result.table["name"].tolist() == ["ann", "bob", "cy", "dee"]
    assert result.message == "Removed 2 duplicate rows (6 -> 4)."


def test_remove_duplicates_without_duplicates_changes_nothing() -> None:
    table = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    result = run(table, "remove_duplicates")
    assert result.message == "No duplicate rows found."
    assert result.table.equals(table)


@pytest.mark.parametrize(
    "parameters",
    [
        {"subset": "id"},
        {"subset": []},
        {"subset": ["nope"]},
        {"subset": ["id", "nope"]},
        {"subset": [1]},
        {"subset": {"id": 1}},
        {"columns": ["id"]},
        {"subset": ["id"], "keep": "last"},
    ],
)
def test_remove_duplicates_bad_parameters(people: pd.DataFrame, parameters: dict) -> None:
    error = refused(people, "remove_duplicates", parameters, InvalidParameters)
    assert error.code == "INVALID_PARAMETERS"


def test_remove_duplicates_unknown_column_is_named(people: pd.DataFrame) -> None:
    error = refused(people, "remove_duplicates", {"subset": ["nope"]}, InvalidParameters)
    assert "nope" in error.detail


# ── fill_missing: mean / median ─────────────────────────────────────────────


@pytest.mark.parametrize(
    ("present", "expected"),
    [
        ([1.0, 2.0, 4.0], 2.0),  # 7/3 = 2.33 -> whole column -> 2
        ([1.0, 2.0], 2.0),  # 1.5 -> half to even -> 2
        ([1.0, 4.0], 2.0),  # 2.5 -> half to even -> 2
        ([3.0, 4.0], 4.0),  # 3.5 -> half to even -> 4
        ([1.0, 2.0, 6.0], 3.0),  # exactly 3
        ([1.5, 2.25, 4.0], 2.58),  # 7.75/3 = 2.5833 -> 2 decimals
        ([0.125, 0.125], 0.12),  # 0.125 -> half to even at 2 decimals
        ([0.375, 0.375], 0.38),
        ([-1.0, -2.0], -2.0),  # -1.5 -> half to even -> -2
    ],
)
def test_fill_mean_rounding(present: list[float], expected: float) -> None:
    table = pd.DataFrame({"a": [*present[:1], np.nan, *present[1:]]})
    result = run(table, "fill_missing", {"strategy": "mean"})
    values = result.table["a"].tolist()
    assert values[1] == expected
    assert values[:1] + values[2:] == present
    assert kind_of(result.table["a"].dtype) == "float"
    assert result.message == "Filled with mean: a (1)."


def test_fill_mean_does_not_depend_on_row_order() -> None:
    values = [0.1, 0.2, 0.3, 1e6, 0.7]
    forward = pd.DataFrame({"a": [*values, np.nan]})
    backward = pd.DataFrame({"a": [np.nan, *reversed(values)]})
    got_forward = run(forward, "fill_missing", {"strategy": "mean"}).table["a"].iloc[-1]
    got_backward = run(backward, "fill_missing", {"strategy": "mean"}).table["a"].iloc[0]
    assert got_forward == got_backward == 200000.26


def test_fill_mean_of_text_numbers_fills_text() -> None:
    table = pd.DataFrame({"price": ["$1,200", "$1,300", None, "$1,000"]})
    result = run(table, "fill_missing", {"strategy": "mean"})
    # (1200 + 1300 + 1000) / 3 = 1166.67; every value is whole -> 1167, written as text.
    assert result.table["price"].tolist() == ["$1,200", "$1,300", "1167", "$1,000"]
    assert kind_of(result.table["price"].dtype) == "str"
    assert result.message == "Filled with mean: price (1)."


def test_fill_mean_of_fractional_text_numbers_has_two_decimals() -> None:
    table = pd.DataFrame({"q": ["1.5", "2.5", None, "2.6"]})
    result = run(table, "fill_missing", {"strategy": "mean", "column": "q"})
    assert result.table["q"].tolist() == ["1.5", "2.5", "2.20", "2.6"]
    assert kind_of(result.table["q"].dtype) == "str"


def test_fill_median_rounding() -> None:
    table = pd.DataFrame(
        {
            "odd": [2.0, 3.0, np.nan, 3.0, 4.0],  # median 3
            "even": [1.0, 2.0, np.nan, 3.0, 4.0],  # median 2.5 -> whole column -> 2
            "frac": [1.25, 2.5, np.nan, 3.0, 4.0],  # median 2.75
        }
    )
    result = run(table, "fill_missing", {"strategy": "median"})
    assert result.table["odd"].tolist() == [2.0, 3.0, 3.0, 3.0, 4.0]
    assert result.table["even"].tolist() == [1.0, 2.0, 2.0, 3.0, 4.0]
    assert result.table["frac"].tolist() == [1.25, 2.5, 2.75, 3.0, 4.0]
    assert result.message == "Filled with median: odd (1), even (1), frac (1)."


def test_fill_median_of_text_numbers_fills_text() -> None:
    table = pd.DataFrame({"q": ["1", "2", None, "$5"]})
    result = run(table, "fill_missing_median")
    assert result.table["q"].tolist() == ["1", "2", "2", "$5"]
    assert kind_of(result.table["q"].dtype) == "str"


def test_fill_mean_without_column_skips_text_columns() -> None:
    table = pd.DataFrame(
        {"a": [1.0, np.nan, 3.0], "t": ["x", None, "y"], "d": ["5", None, "7"]},
    )
    result = run(table, "fill_missing", {"strategy": "mean"})
    assert result.table["a"].tolist() == [1.0, 2.0, 3.0]
    assert result.table["d"].tolist() == ["5", "6", "7"]
    assert cells(result.table["t"]) == ["x", None, "y"]
    assert result.message == "Filled with mean: a (1), d (1). Skipped (strategy does not apply): t."


def test_fill_mean_on_text_column_is_refused() -> None:
    table = pd.DataFrame({"t": ["x", None, "y"]})
    error = refused(table, "fill_missing", {"strategy": "mean", "column": "t"}, OperationFailed)
    assert error.code == "OPERATION_FAILED"
    refused(table, "fill_missing_median", {"column": "t"}, OperationFailed)


def test_fill_mean_on_text_only_table_fills_nothing() -> None:
    table = pd.DataFrame({"t": ["x", None, "y"]})
    result = run(table, "fill_missing", {"strategy": "mean"})
    assert result.message == (
        "No missing values filled with mean. Skipped (strategy does not apply): t."
    )
    assert result.table.equals(table)


def test_fill_mean_of_empty_column_is_refused() -> None:
    table = pd.DataFrame({"a": [np.nan, np.nan], "b": [1, 2]})
    refused(table, "fill_missing", {"strategy": "mean", "column": "a"}, OperationFailed)
    refused(table, "fill_missing", {"strategy": "mode", "column": "a"}, OperationFailed)


# ── fill_missing: mode / ffill / bfill ──────────────────────────────────────


def test_fill_mode_picks_most_frequent() -> None:
    table = pd.DataFrame({"r": ["x", "y", None, "y", "z"]})
    result = run(table, "fill_missing", {"strategy": "mode"})
    assert result.table["r"].tolist() == ["x", "y", "y", "y", "z"]
    assert result.message == "Filled with mode: r (1)."


@pytest.mark.parametrize("reverse", [False, True])
def test_fill_mode_ties_resolve_to_smallest(reverse: bool) -> None:
    numbers = [2.0, 1.0, 2.0, 1.0, 3.0]
    texts = ["b", "a", "b", "a", "c"]
    if reverse:
        numbers, texts = numbers[::-1], texts[::-1]
    table = pd.DataFrame({"n": [*numbers, np.nan], "t": [*texts, None]})
    result = run(table, "fill_missing_mode")
    assert result.table["n"].iloc[-1] == 1.0
    assert result.table["t"].iloc[-1] == "a"
    assert kinds(result.table) == {"n": "float", "t": "str"}


def test_fill_mode_of_text_numbers_keeps_text() -> None:
    table = pd.DataFrame({"s": ["$1,300", "$1,000", None, "$1,300", "$1,000"]})
    result = run(table, "fill_missing", {"strategy": "mode", "column": "s"})
    assert result.table["s"].tolist() == ["$1,300", "$1,000", "$1,000", "$1,300", "$1,000"]


def test_fill_ffill_and_bfill() -> None:
    table = pd.DataFrame(
        {"a": [np.nan, 1.0, np.nan, 3.0, np.nan], "t": ["x", None, "y", None, None]}
    )
    forward = run(table, "fill_missing", {"strategy": "ffill"})
    assert cells(forward.table["a"]) == [None, 1.0, 1.0, 3.0, 3.0]
    assert forward.table["t"].tolist() == ["x", "x", "y", "y", "y"]
    assert forward.message == "Filled with ffill: a (2), t (3)."
    backward = run(table, "fill_missing_bfill")
    assert cells(backward.table["a"]) == [1.0, 1.0, 3.0, 3.0, None]
    assert cells(backward.table["t"]) == ["x", "y", "y", None, None]
    assert backward.message == "Filled with bfill: a (2), t (1)."


def test_fill_ffill_with_nothing_before_fills_nothing() -> None:
    table = pd.DataFrame({"a": [np.nan, 1.0]})
    result = run(table, "fill_missing", {"strategy": "ffill"})
    assert result.message == "No missing values filled with ffill."
    assert result.table.equals(table)


# ── fill_missing: constant ──────────────────────────────────────────────────


def test_fill_constant_numeric() -> None:
    table = pd.DataFrame({"a": [1.5, np.nan, 2.5]})
    result = run(table, "fill_missing", {"strategy": "constant", "value": 0})
    assert result.table["a"].tolist() == [1.5, 0.0, 2.5]
    assert kind_of(result.table["a"].dtype) == "float"
    result = run(table, "fill_missing_constant", {"value": 7.25, "column": "a"})
    assert result.table["a"].tolist() == [1.5, 7.25, 2.5]
    assert result.message == "Filled with constant: a (1)."


@pytest.mark.parametrize(
    ("value", "expected"), [("junk", "junk"), (5, "5"), (2.5, "2.5"), (True, "true")]
)
def test_fill_constant_text_column_gets_text(value: Any, expected: str) -> None:
    table = pd.DataFrame({"t": ["x", None, "y"]})
    result = run(table, "fill_missing", {"strategy": "constant", "value": value})
    assert result.table["t"].tolist() == ["x", expected, "y"]
    assert kind_of(result.table["t"].dtype) == "str"


def test_fill_constant_datetime_column_takes_iso_date() -> None:
    table = pd.DataFrame({"d": pd.to_datetime(["2024-01-02", None, "2024-03-04"])})
    result = run(table, "fill_missing", {"strategy": "constant", "value": "2024-01-31"})
    assert result.table["d"].tolist() == [
        pd.Timestamp("2024-01-02"),
        pd.Timestamp("2024-01-31"),
        pd.Timestamp("2024-03-04"),
    ]
    assert kind_of(result.table["d"].dtype) == "datetime"


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("a", "5"),  # text into a number column
        ("a", "junk"),
        ("a", True),  # a bool is not a number
        ("d", "junk"),  # not an ISO date
        ("d", "31/01/2024"),
        ("d", 5),
    ],
)
def test_fill_constant_must_fit_the_column(column: str, value: Any) -> None:
    table = pd.DataFrame(
        {"a": [1.0, np.nan], "d": pd.to_datetime(["2024-01-02", None]), "t": [None, "x"]}
    )
    error = refused(
        table,
        "fill_missing",
        {"strategy": "constant", "value": value, "column": column},
        InvalidParameters,
    )
    assert error.code == "INVALID_PARAMETERS"


def test_fill_constant_without_column_must_fit_every_column() -> None:
    table = pd.DataFrame({"a": [1.0, np.nan], "t": [None, "x"]})
    # "junk" fits the text column but not the numeric one: the whole step is refused.
    refused(table, "fill_missing", {"strategy": "constant", "value": "junk"}, InvalidParameters)
    # 0 fits both (as 0.0 and as "0").
    result = run(table, "fill_missing", {"strategy": "constant", "value": 0})
    assert result.table["a"].tolist() == [1.0, 0.0]
    assert result.table["t"].tolist() == ["0", "x"]
    assert kinds(result.table) == {"a": "float", "t": "str"}


@pytest.mark.parametrize(
    "strategy", [s for s in STRATEGIES if s not in ("ffill", "bfill", "constant")]
)
def test_fill_never_changes_column_kinds(strategy: str) -> None:
    table = pd.DataFrame(
        {
            "f": [1.0, np.nan, 3.0],
            "tn": ["1", None, "3"],
            "t": ["a", None, "a"],
            "d": pd.to_datetime(["2024-01-02", None, "2024-01-02"]),
        }
    )
    result = run(table, "fill_missing", {"strategy": strategy})
    assert kinds(result.table) == kinds(table)


def test_fill_column_without_missing_values() -> None:
    table = pd.DataFrame({"a": [1.0, 2.0], "b": [np.nan, 1.0]})
    result = run(table, "fill_missing", {"strategy": "mean", "column": "a"})
    assert result.message == "Column 'a' has no missing values; nothing filled."
    assert result.table.equals(table)


def test_fill_table_without_missing_values() -> None:
    table = pd.DataFrame({"a": [1.0, 2.0]})
    result = run(table, "fill_missing", {})
    assert result.message == "No missing values filled with mean."
    assert result.table.equals(table)


def test_fill_default_strategy_is_mean() -> None:
    table = pd.DataFrame({"a": [1.0, np.nan, 4.0]})
    result = run(table, "fill_missing", {})
    assert result.table["a"].tolist() == [1.0, 2.0, 4.0]  # 2.5 -> half to even -> 2


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_fill_aliases_match_explicit_strategy(strategy: str) -> None:
    table = pd.DataFrame({"a": [1.0, np.nan, 2.0, np.nan, 2.0], "t": ["x", None, "y", "y", None]})
    extra = {"value": 9} if strategy == "constant" else {}
    explicit = run(table, "fill_missing", {"strategy": strategy, **extra})
    aliased = run(table, f"fill_missing_{strategy}", extra)
    same_spelling = run(table, f"fill_missing_{strategy}", {"strategy": strategy, **extra})
    assert aliased.table.equals(explicit.table)
    assert same_spelling.table.equals(explicit.table)
    assert aliased.message == explicit.message


@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("fill_missing_mean", {"strategy": "median"}),
        ("fill_missing_mode", {"strategy": "mean"}),
        ("fill_missing_constant", {"strategy": "mode", "value": 1}),
        ("fill_missing_ffill", {"strategy": "bfill"}),
    ],
)
def test_fill_alias_conflicting_with_strategy_is_refused(name: str, parameters: dict) -> None:
    table = pd.DataFrame({"a": [1.0, np.nan]})
    error = refused(table, name, parameters, InvalidParameters)
    assert error.code == "INVALID_PARAMETERS"


@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("fill_missing", {"strategy": "average"}),
        ("fill_missing", {"strategy": "MEAN"}),
        ("fill_missing", {"strategy": 1}),
        ("fill_missing", {"column": 5}),
        ("fill_missing", {"column": ["a"]}),
        ("fill_missing", {"column": "nope"}),
        ("fill_missing", {"strategy": "constant"}),  # value missing
        ("fill_missing", {"strategy": "constant", "value": None}),
        ("fill_missing_constant", {}),
        ("fill_missing", {"strategy": "mean", "value": 1}),  # value without constant
        ("fill_missing_mode", {"value": "x"}),
        ("fill_missing", {"strategy": "constant", "value": [1]}),
        ("fill_missing", {"strategy": "constant", "value": {"a": 1}}),
        ("fill_missing", {"strategy": "constant", "value": math.nan}),
        ("fill_missing", {"strategy": "constant", "value": math.inf}),
        ("fill_missing", {"method": "mean"}),
        ("fill_missing", {"strategy": "mean", "columns": ["a"]}),
    ],
)
def test_fill_bad_parameters(name: str, parameters: dict) -> None:
    table = pd.DataFrame({"a": [1.0, np.nan], "t": ["x", None]})
    error = refused(table, name, parameters, InvalidParameters)
    assert error.code == "INVALID_PARAMETERS"


# ── fix_dtype ───────────────────────────────────────────────────────────────


def test_fix_dtype_int_from_text_and_whole_floats() -> None:
    table = pd.DataFrame({"t": ["1", " 2 ", "$1,000"], "f": [1.0, 2.0, 3.0], "i": [4, 5, 6]})
    result = run(table, "fix_dtype", {"dtype": "int"})
    assert result.table["t"].tolist() == [1, 2, 1000]
    assert result.table["f"].tolist() == [1, 2, 3]
    assert result.table["i"].tolist() == [4, 5, 6]
    assert kinds(result.table) == {"t": "int", "f": "int", "i": "int"}
    assert result.message == "Converted t: str -> int, f: float -> int."


@pytest.mark.parametrize(
    "values",
    [
        ["1", "x"],  # text that is not a number
        ["1", "1.5"],  # a fraction in text
        [1.0, 1.5],  # a fraction
        [1.0, np.nan],  # a missing value
        ["1", None],
        ["1e20", "2"],  # does not fit a 64-bit integer
    ],
)
def test_fix_dtype_int_refuses_lossy_casts(values: list[Any]) -> None:
    table = pd.DataFrame({"a": values, "b": [1, 2]})
    error = refused(table, "fix_dtype", {"dtype": "int", "column": "a"}, OperationFailed)
    assert error.code == "OPERATION_FAILED"


def test_fix_dtype_int_refusal_names_the_bad_values() -> None:
    table = pd.DataFrame({"a": ["1", "oops"]})
    error = refused(table, "fix_dtype", {"dtype": "int"}, OperationFailed)
    assert "oops" in error.detail
    table = pd.DataFrame({"a": [1.0, 2.5]})
    error = refused(table, "fix_dtype", {"dtype": "int"}, OperationFailed)
    assert "2.5" in error.detail


def test_fix_dtype_without_column_refuses_whole_step() -> None:
    table = pd.DataFrame({"n": ["1", "2"], "t": ["x", "y"]})
    refused(table, "fix_dtype", {"dtype": "int"}, OperationFailed)
    refused(table, "fix_dtype", {"dtype": "float"}, OperationFailed)


def test_fix_dtype_float() -> None:
    table = pd.DataFrame({"p": ["$1,200.50", "3", None, "€ 7"], "i": [1, 2, 3, 4]})
    result = run(table, "fix_dtype", {"dtype": "float"})
    assert cells(result.table["p"]) == [1200.5, 3.0, None, 7.0]
    assert result.table["i"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert kinds(result.table) == {"p": "float", "i": "float"}
    assert result.message == "Converted p: str -> float, i: int -> float."


@pytest.mark.parametrize("values", [["1", "abc"], ["1", "nan"], ["1", "inf"], ["1", "1_000"]])
def test_fix_dtype_float_refuses_text(values: list[str]) -> None:
    table = pd.DataFrame({"a": values})
    refused(table, "fix_dtype", {"dtype": "float", "column": "a"}, OperationFailed)


def test_fix_dtype_float_refuses_bool_and_dates() -> None:
    table = pd.DataFrame({"b": [True, False], "d": pd.to_datetime(["2024-01-01", "2024-01-02"])})
    refused(table, "fix_dtype", {"dtype": "float", "column": "b"}, OperationFailed)
    refused(table, "fix_dtype", {"dtype": "float", "column": "d"}, OperationFailed)


def test_fix_dtype_str() -> None:
    table = pd.DataFrame(
        {
            "i": [1, 2],
            "f": [1.5, np.nan],
            "b": [True, False],
            "d": pd.to_datetime(["2024-01-31", None]),
            "t": ["x", "y"],
        }
    )
    result = run(table, "fix_dtype", {"dtype": "str"})
    assert result.table["i"].tolist() == ["1", "2"]
    assert cells(result.table["f"]) == ["1.5", None]
    assert result.table["b"].tolist() == ["true", "false"]
    assert cells(result.table["d"]) == ["2024-01-31", None]
    assert result.table["t"].tolist() == ["x", "y"]
    assert set(kinds(result.table).values()) == {"str"}
    assert result.message == (
        "Converted i: int -> str, f: float -> str, b: bool -> str, d: datetime -> str."
    )


def test_fix_dtype_bool() -> None:
    table = pd.DataFrame({"b": ["true", "False", "yes", "0"], "i": [1, 0, 0, 1]})
    result = run(table, "fix_dtype", {"dtype": "bool"})
    assert result.table["b"].tolist() == [True, False, True, False]
    assert result.table["i"].tolist() == [True, False, False, True]
    assert kinds(result.table) == {"b": "bool", "i": "bool"}


@pytest.mark.parametrize("values", [["true", None], ["true", "maybe"], [1.0, np.nan], [2, 0]])
def test_fix_dtype_bool_refuses(values: list[Any]) -> None:
    table = pd.DataFrame({"b": values})
    refused(table, "fix_dtype", {"dtype": "bool", "column": "b"}, OperationFailed)


def test_fix_dtype_datetime() -> None:
    table = pd.DataFrame({"d": ["2024-01-31", None, "2023-12-01"]})
    result = run(table, "fix_dtype", {"dtype": "datetime", "column": "d"})
    assert cells(result.table["d"]) == [
        pd.Timestamp("2024-01-31"),
        None,
        pd.Timestamp("2023-12-01"),
    ]
    assert kind_of(result.table["d"].dtype) == "datetime"
    assert result.message == "Converted d: str -> datetime."


def test_fix_dtype_datetime_with_times() -> None:
    table = pd.DataFrame({"d": ["2024-01-31T10:30:00", "2024-02-01 08:00", "2024-02-02"]})
    result = run(table, "fix_dtype", {"dtype": "auto"})
    assert result.table["d"].tolist() == [
        pd.Timestamp("2024-01-31 10:30"),
        pd.Timestamp("2024-02-01 08:00"),
        pd.Timestamp("2024-02-02"),
    ]
    back = run(result.table, "fix_dtype", {"dtype": "str"})
    assert back.table["d"].tolist() == ["2024-01-31T10:30:00", "2024-02-01T08:00:00", "2024-02-02"]


@pytest.mark.parametrize(
    "values", [["2024-01-31", "31/01/2024"], ["2024-02-30"], ["2024-01-31", "soon"], [1, 2]]
)
def test_fix_dtype_datetime_refuses(values: list[Any]) -> None:
    table = pd.DataFrame({"d": values})
    refused(table, "fix_dtype", {"dtype": "datetime"}, OperationFailed)


def test_fix_dtype_auto_infers_each_column() -> None:
    table = pd.DataFrame(
        {
            "ints": ["1", "2", "3"],
            "money": ["$1,200.50", "$3", "$4.25"],
            "flags": ["true", "False", "TRUE"],
            "dates": ["2024-01-31", None, "2023-12-01"],
            "whole": [1.0, 2.0, 3.0],
            "holes": [1.0, np.nan, 3.0],
            "text": ["a", "b", "c"],
            "textnum": ["1", None, "3"],
            "yesno": ["yes", "no", "yes"],
            "already": [7, 8, 9],
        }
    )
    result = run(table, "fix_dtype", {"dtype": "auto"})
    got = result.table
    assert kinds(got) == {
        "ints": "int",
        "money": "float",
        "flags": "bool",
        "dates": "datetime",
        "whole": "int",
        "holes": "float",
        "text": "str",
        "textnum": "float",
        "yesno": "str",
        "already": "int",
    }
    assert got["ints"].tolist() == [1, 2, 3]
    assert got["money"].tolist() == [1200.5, 3.0, 4.25]
    assert got["flags"].tolist() == [True, False, True]
    assert cells(got["dates"]) == [pd.Timestamp("2024-01-31"), None, pd.Timestamp("2023-12-01")]
    assert got["whole"].tolist() == [1, 2, 3]
    assert cells(got["holes"]) == [1.0, None, 3.0]
    assert cells(got["textnum"]) == [1.0, None, 3.0]
    assert got["yesno"].tolist() == ["yes", "no", "yes"]
    assert result.message == (
        "Converted ints: str -> int, money: str -> float, flags: str -> bool, "
        "dates: str -> datetime, whole: float -> int, textnum: str -> float."
    )


def test_fix_dtype_auto_is_the_default() -> None:
    table = pd.DataFrame({"a": ["1", "2"]})
    result = run(table, "fix_dtype", {})
    assert result.table["a"].tolist() == [1, 2]
    assert result.message == "Converted a: str -> int."


def test_fix_dtype_auto_keeps_huge_whole_numbers_exact() -> None:
    table = pd.DataFrame({"a": ["1e20", "2"]})
    result = run(table, "fix_dtype", {"dtype": "auto"})
    # 1e20 does not fit in int64, so auto must not turn it into an integer.
    assert result.table["a"].tolist() == [1e20, 2.0]
    assert kind_of(result.table["a"].dtype) == "float"


def test_fix_dtype_auto_with_nothing_to_do() -> None:
    table = pd.DataFrame({"a": [1, 2], "t": ["x", "y"], "f": [1.5, np.nan]})
    result = run(table, "fix_dtype", {"dtype": "auto"})
    assert result.message == "No column changed type (auto)."
    assert result.table.equals(table)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fix_dtype_to_own_kind_changes_nothing(dtype: str) -> None:
    columns = {
        "int": [1, 2],
        "float": [1.5, 2.5],
        "str": ["x", "y"],
        "bool": [True, False],
        "datetime": pd.to_datetime(["2024-01-01", "2024-01-02"]),
    }
    table = pd.DataFrame({"a": columns[dtype]})
    result = run(table, "fix_dtype", {"dtype": dtype})
    assert result.message == f"No column changed type ({dtype})."
    assert result.table.equals(table)


def test_fix_dtype_only_touches_the_named_column() -> None:
    table = pd.DataFrame({"a": ["1", "2"], "b": ["3", "4"]})
    result = run(table, "fix_dtype", {"dtype": "int", "column": "a"})
    assert kinds(result.table) == {"a": "int", "b": "str"}
    assert result.table["b"].tolist() == ["3", "4"]


@pytest.mark.parametrize(
    "parameters",
    [
        {"dtype": "integer"},
        {"dtype": "INT"},
        {"dtype": "object"},
        {"dtype": 1},
        {"column": 5},
        {"column": ["a"]},
        {"column": "nope"},
        {"dtype": "int", "column": "nope"},
        {"type": "int"},
        {"dtype": "int", "errors": "coerce"},
    ],
)
def test_fix_dtype_bad_parameters(parameters: dict) -> None:
    table = pd.DataFrame({"a": ["1", "2"]})
    error = refused(table, "fix_dtype", parameters, InvalidParameters)
    assert error.code == "INVALID_PARAMETERS"


# ── remove_outliers ─────────────────────────────────────────────────────────


def test_remove_outliers_iqr_default() -> None:
    table = pd.DataFrame({"v": [10, 11, 12, 13, 100], "t": ["a", "b", "c", "d", "e"]})
    result = run(table, "remove_outliers", {"method": "iqr", "column": "v"})
    # Q1 = 11, Q3 = 13, IQR = 2 -> keep [8, 16].
    assert result.table["v"].tolist() == [10, 11, 12, 13]
    assert result.table["t"].tolist() == ["a", "b", "c", "d"]
    assert result.table.index.tolist() == [0, 1, 2, 3]
    assert kinds(result.table) == {"v": "int", "t": "str"}
    assert result.message == "Removed 1 outlier rows by iqr on v (5 -> 4)."


def test_remove_outliers_iqr_threshold() -> None:
    table = pd.DataFrame({"v": [10.0, 11.0, 12.0, 13.0, 30.0]})
    # k = 8 -> keep [-5, 29]: 30 is out; k = 10 -> keep [-9, 33]: nothing is out.
    tight = run(table, "remove_outliers", {"column": "v", "threshold": 8.0})
    assert tight.table["v"].tolist() == [10.0, 11.0, 12.0, 13.0]
    loose = run(table, "remove_outliers", {"column": "v", "threshold": 10.0})
    assert loose.table.equals(table)
    assert loose.message == "No outliers found by iqr on v."


def test_remove_outliers_zscore_default_and_threshold() -> None:
    table = pd.DataFrame({"v": [10.0] * 7 + [100.0]})
    # One value among 8: z = sqrt(7) = 2.65, under the default 3.
    default = run(table, "remove_outliers", {"method": "zscore", "column": "v"})
    assert default.table.equals(table)
    assert default.message == "No outliers found by zscore on v."
    strict = run(table, "remove_outliers", {"method": "zscore", "column": "v", "threshold": 2.5})
    assert strict.table["v"].tolist() == [10.0] * 7
    assert strict.message == "Removed 1 outlier rows by zscore on v (8 -> 7)."
    looser = run(table, "remove_outliers", {"method": "zscore", "column": "v", "threshold": 2.7})
    assert looser.table.equals(table)


def test_remove_outliers_zscore_of_constant_column_finds_none() -> None:
    table = pd.DataFrame({"v": [5.0, 5.0, 5.0, np.nan]})
    result = run(table, "remove_outliers", {"method": "zscore", "column": "v", "threshold": 0.1})
    assert result.table.equals(table)


@pytest.mark.parametrize("method", ["iqr", "zscore"])
def test_remove_outliers_never_flags_missing_cells(method: str) -> None:
    table = pd.DataFrame({"v": [10.0, 11.0, np.nan, 12.0, 13.0, 10.0, 11.0, 1000.0]})
    threshold = 1.5 if method == "iqr" else 2.0
    result = run(
        table, "remove_outliers", {"method": method, "column": "v", "threshold": threshold}
    )
    assert cells(result.table["v"]) == [10.0, 11.0, None, 12.0, 13.0, 10.0, 11.0]
    assert result.message == f"Removed 1 outlier rows by {method} on v (8 -> 7)."


def test_remove_outliers_without_column_uses_every_numeric_column() -> None:
    table = pd.DataFrame(
        {
            "a": [1, 2, 3, 2, 1, 90],
            "b": [5.0, 5.5, 6.0, 500.0, 5.0, 5.5],
            "t": ["1", "2", "3", "4", "5", "9999"],  # text: not looked at
        }
    )
    result = run(table, "remove_outliers", {})
    assert result.table["a"].tolist() == [1, 2, 3, 1]
    assert result.table["t"].tolist() == ["1", "2", "3", "5"]
    assert result.message == "Removed 2 outlier rows by iqr on numeric columns (6 -> 4)."


@pytest.mark.parametrize(
    "values",
    [["1", "2", "300"], ["a", "b", "c"], [True, False, True]],
    ids=["textnum", "text", "bool"],
)
def test_remove_outliers_refuses_non_numeric_columns(values: list[Any]) -> None:
    table = pd.DataFrame({"v": values, "n": [1, 2, 3]})
    error = refused(table, "remove_outliers", {"column": "v"}, OperationFailed)
    assert error.code == "OPERATION_FAILED"


@pytest.mark.parametrize(
    "parameters",
    [
        {"method": "mad"},
        {"method": "IQR"},
        {"threshold": "2"},
        {"threshold": 0},
        {"threshold": -1.0},
        {"threshold": 101.0},
        {"threshold": [2.0]},
        {"column": 5},
        {"column": "nope"},
        {"method": "iqr", "k": 1.5},
    ],
)
def test_remove_outliers_bad_parameters(parameters: dict) -> None:
    table = pd.DataFrame({"v": [1.0, 2.0, 3.0, 100.0]})
    error = refused(table, "remove_outliers", parameters, InvalidParameters)
    assert error.code == "INVALID_PARAMETERS"


# ── rename_columns ──────────────────────────────────────────────────────────


def test_rename_columns_by_mapping() -> None:
    table = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    result = run(table, "rename_columns", {"mapping": {"a": " id "}})
    assert list(result.table.columns) == ["id", "b"]
    assert result.table["id"].tolist() == [1, 2]
    assert result.table["b"].tolist() == ["x", "y"]
    assert result.message == "Renamed 'a' -> 'id'."


def test_rename_columns_swap() -> None:
    table = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    result = run(table, "rename_columns", {"mapping": {"a": "b", "b": "a"}})
    assert list(result.table.columns) == ["b", "a"]
    assert result.table["b"].tolist() == [1, 2]
    assert result.table["a"].tolist() == ["x", "y"]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("EMP ID", "emp_id"),
        ("Unit Price ($)", "unit_price"),
        ("SalesChannel", "sales_channel"),
        ("DEP T", "dep_t"),
        (" Sale Date ", "sale_date"),
        ("already_snake", "already_snake"),
    ],
)
def test_rename_columns_snake_case(header: str, expected: str) -> None:
    table = pd.DataFrame({header: [1, 2], "other": [3, 4]})
    result = run(table, "rename_columns", {})
    assert list(result.table.columns) == [expected, "other"]
    assert result.table[expected].tolist() == [1, 2]


def test_rename_columns_snake_case_whole_table() -> None:
    table = pd.DataFrame(
        {"EMP ID": [1], "Unit Price ($)": [2.0], "SalesChannel": ["web"], "ok": [True]}
    )
    result = run(table, "rename_columns")
    assert list(result.table.columns) == ["emp_id", "unit_price", "sales_channel", "ok"]
    assert result.message == (
        "Renamed 'EMP ID' -> 'emp_id', 'Unit Price ($)' -> 'unit_price', "
        "'SalesChannel' -> 'sales_channel'."
    )
    assert kinds(result.table) == {
        "emp_id": "int",
        "unit_price": "float",
        "sales_channel": "str",
        "ok": "bool",
    }


@pytest.mark.parametrize(
    ("columns", "parameters"),
    [
        (["a", "b"], {"mapping": {"a": "b"}}),
        (["a", "b", "c"], {"mapping": {"a": "x", "b": "x"}}),
        (["A B", "a_b"], {}),  # snake_case makes both 'a_b'
        (["Price", "price"], {"mapping": None}),
    ],
)
def test_rename_columns_clash_is_refused(columns: list[str], parameters: dict) -> None:
    table = pd.DataFrame({c: [i] for i, c in enumerate(columns)})
    error = refused(table, "rename_columns", parameters, InvalidParameters)
    assert error.code == "INVALID_PARAMETERS"


def test_rename_columns_no_change() -> None:
    table = pd.DataFrame({"a": [1], "b": [2]})
    for parameters in ({"mapping": {}}, {"mapping": {"a": "a"}}, {}):
        result = run(table, "rename_columns", parameters)
        assert result.message == "No column renamed."
        assert result.table.equals(table)
        assert list(result.table.columns) == ["a", "b"]


def test_rename_columns_name_length_limit() -> None:
    table = pd.DataFrame({"a": [1]})
    result = run(table, "rename_columns", {"mapping": {"a": "x" * 64}})
    assert list(result.table.columns) == ["x" * 64]
    refused(table, "rename_columns", {"mapping": {"a": "x" * 65}}, InvalidParameters)


@pytest.mark.parametrize(
    "parameters",
    [
        {"mapping": {"nope": "x"}},
        {"mapping": {"a": ""}},
        {"mapping": {"a": "   "}},
        {"mapping": "a"},
        {"mapping": ["a", "x"]},
        {"mapping": {"a": 1}},
        {"columns": {"a": "x"}},
        {"mapping": {"a": "x"}, "case": "snake"},
    ],
)
def test_rename_columns_bad_parameters(parameters: dict) -> None:
    table = pd.DataFrame({"a": [1], "b": [2]})
    error = refused(table, "rename_columns", parameters, InvalidParameters)
    assert error.code == "INVALID_PARAMETERS"


def test_rename_columns_snake_case_to_empty_name_is_refused() -> None:
    table = pd.DataFrame({"($)": [1], "b": [2]})
    refused(table, "rename_columns", {}, InvalidParameters)


# ── validate_schema / finish ────────────────────────────────────────────────


SCHEMA = {"id": "int", "name": "str", "when": "datetime"}


def test_validate_schema_match() -> None:
    table = pd.DataFrame(
        {"id": [1, 2], "name": ["a", "b"], "when": pd.to_datetime(["2024-01-01", "2024-01-02"])}
    )
    result = run(table, "validate_schema", {}, schema=SCHEMA)
    assert result.message == "Schema matches the target schema."
    assert result.table is table


def test_validate_schema_reports_names_and_types() -> None:
    table = pd.DataFrame({"id": ["1", "2"], "name": ["a", "b"], "extra": [1.0, 2.0]})
    result = run(table, "validate_schema", {}, schema=SCHEMA)
    assert result.message == (
        "Schema mismatches: missing columns ['when']; unexpected columns ['extra']; "
        "id is str, expected int."
    )
    assert result.table.equals(table)


@pytest.mark.parametrize("name", ["validate_schema", "finish"])
@pytest.mark.parametrize("parameters", [{"x": 1}, {"column": "id"}, {"strict": True}])
def test_no_parameter_operations_refuse_parameters(name: str, parameters: dict) -> None:
    table = pd.DataFrame({"id": [1]})
    error = refused(table, name, parameters, InvalidParameters, schema=SCHEMA)
    assert error.code == "INVALID_PARAMETERS"


def test_finish() -> None:
    table = pd.DataFrame({"id": [1, 2]})
    result = run(table, "finish", {})
    assert result.message == "Episode finished."
    assert result.table.equals(table)
    assert get_operation("finish").ends_episode


def test_none_parameters_mean_defaults() -> None:
    table = pd.DataFrame({"a": [1.0, np.nan, 3.0]})
    result = run(table, "fill_missing", None)
    assert result.table["a"].tolist() == [1.0, 2.0, 3.0]


# ── no operation mutates its input ──────────────────────────────────────────


MUTATION_CASES = [
    ("remove_duplicates", {}),
    ("remove_duplicates", {"subset": ["k"]}),
    ("fill_missing", {"strategy": "mean"}),
    ("fill_missing", {"strategy": "median"}),
    ("fill_missing", {"strategy": "mode"}),
    ("fill_missing", {"strategy": "ffill"}),
    ("fill_missing", {"strategy": "bfill"}),
    ("fill_missing", {"strategy": "constant", "value": 0}),
    ("fill_missing", {"strategy": "constant", "value": "z", "column": "t"}),
    ("fix_dtype", {"dtype": "auto"}),
    ("fix_dtype", {"dtype": "str"}),
    ("fix_dtype", {"dtype": "float", "column": "n"}),
    ("fix_dtype", {"dtype": "int", "column": "k"}),
    ("remove_outliers", {"method": "iqr"}),
    ("remove_outliers", {"method": "zscore", "threshold": 1.0}),
    ("rename_columns", {}),
    ("rename_columns", {"mapping": {"k": "key", "n": "k"}}),
    ("validate_schema", {}),
    ("finish", {}),
]


@pytest.mark.parametrize(("name", "parameters"), MUTATION_CASES)
def test_operations_never_mutate_their_input(name: str, parameters: dict) -> None:
    table = pd.DataFrame(
        {
            "k": [1.0, 2.0, 2.0, 3.0, 4.0, 5.0],
            "n": [1.5, np.nan, np.nan, 2.5, 3.5, 400.0],
            "t": ["a", None, None, "b", "b", "c"],
            "Mixed Case": ["1", "2", "2", None, "5", "6"],
        }
    )
    snapshot = table.copy(deep=True)
    values = {c: cells(table[c]) for c in table.columns}
    result = run(table, name, parameters, schema={"k": "int"})
    assert table.equals(snapshot)
    assert {c: cells(table[c]) for c in table.columns} == values
    assert list(table.columns) == ["k", "n", "t", "Mixed Case"]
    # Writing to a new result table must not reach the input either.
    if result.table is not table and len(result.table) and len(result.table.columns):
        result.table.iloc[0, 0] = -1
        assert table.equals(snapshot)


def test_fix_dtype_float_refuses_ints_beyond_exact_float_range() -> None:
    table = pd.DataFrame({"a": pd.Series([2**60 + 1, 3], dtype="int64")})
    before = table.copy()
    op, params = resolve("fix_dtype", {"dtype": "float", "column": "a"})
    with pytest.raises(OperationFailed, match="too large to convert exactly"):
        op.apply(table, params, OpContext())
    assert table.equals(before)


@pytest.mark.parametrize(("name", "inner"), [("fix", FIX_OPERATIONS), ("standardise", TRANSFORMS)])
def test_an_operation_that_may_run_a_slow_one_is_slow(name: str, inner: frozenset[str]) -> None:
    """Servers run a slow operation off the event loop; one that runs others inherits it."""
    assert sorted(n for n in inner if get_operation(n).slow)  # it may run a slow one
    assert get_operation(name).slow
