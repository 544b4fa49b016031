"""Value-repair operations (text, formats, clamp, dedupe, aliases) and protected key columns:
exact results on small tables, bad parameters, and inputs left untouched."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from dataclean_env.errors import EnvError, InvalidParameters, OperationFailed
from dataclean_env.operations import OpContext, resolve
from dataclean_env.operations.formats import to_iso, to_us_phone
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import kind_of


def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [1, 2, 3, 4],
            "name": ["  ana lópez ", "BOB", "N/A", None],
            "city": ["NYC", "new york", "-", "Boston"],
            "amount": ["$1,234.567", "2", "3.5", None],
            "score": [5.0, 500.0, -3.0, np.nan],
        }
    )


def apply(name: str, parameters: dict[str, Any], ctx: OpContext | None = None):
    before = table()
    op, params = resolve(name, parameters)
    context = ctx or OpContext()
    result = op.apply(before, params, context)
    assert before.equals(table()), "the input table was modified"
    if result.snapshot is not None:
        assert result.snapshot == Snapshot.of(result.table)
    return result


def values(frame: pd.DataFrame, column: str) -> list:
    return [None if pd.isna(v) else v for v in frame[column]]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("strip", ["ana lópez", "BOB", "N/A", None]),
        ("lower", ["  ana lópez ", "bob", "n/a", None]),
        ("upper", ["  ANA LÓPEZ ", "BOB", "N/A", None]),
        ("title", ["  Ana López ", "Bob", "N/A", None]),
    ],
)
def test_case_and_space_operations(name, expected) -> None:
    result = apply(name, {"column": "name"})
    assert values(result.table, "name") == expected
    assert kind_of(result.table["name"].dtype) == "str"
    assert values(result.table, "city") == values(table(), "city")


def test_case_operations_without_a_column_touch_every_text_column() -> None:
    result = apply("upper", {})
    assert values(result.table, "city") == ["NYC", "NEW YORK", "-", "BOSTON"]
    assert values(result.table, "amount")[0] == "$1,234.567"
    assert result.table["score"].equals(table()["score"])
    assert result.message == "upper: name (1), city (2)."


def test_replace_and_map_match_whole_cells() -> None:
    replaced = apply("replace", {"column": "city", "old_value": "NYC", "new_value": "New York"})
    assert values(replaced.table, "city") == ["New York", "new york", "-", "Boston"]
    mapped = apply(
        "map", {"column": "city", "mapping": {"NYC": "New York", "new york": "New York"}}
    )
    assert values(mapped.table, "city") == ["New York", "New York", "-", "Boston"]
    untouched = apply("replace", {"column": "city", "old_value": "New", "new_value": "x"})
    assert untouched.table is not None and untouched.message == "replace: no cell changed."


def test_regex_replace_with_groups_and_a_time_limit() -> None:
    result = apply(
        "regex_replace",
        {"column": "name", "pattern": r"^\s*(\w+)\s+(\w+)\s*$", "replacement": r"\2, \1"},
    )
    assert values(result.table, "name") == ["lópez, ana", "BOB", "N/A", None]
    with pytest.raises(InvalidParameters):
        apply("regex_replace", {"column": "name", "pattern": "(", "replacement": ""})
    with pytest.raises(InvalidParameters):
        apply("regex_replace", {"column": "name", "pattern": "a", "replacement": r"\9"})
    slow = pd.DataFrame({"t": ["a" * 40 + "!"]})
    op, params = resolve(
        "regex_replace", {"column": "t", "pattern": r"^(a|aa)+$", "replacement": ""}
    )
    with pytest.raises(OperationFailed, match="longer than"):
        op.apply(slow, params, OpContext())


@pytest.mark.parametrize(
    ("name", "extra"), [("regex_replace", {"replacement": ""}), ("find_rows", {})]
)
def test_a_pattern_whose_counted_repeats_multiply_past_the_limit_is_refused(
    name: str, extra: dict[str, Any]
) -> None:
    """`(?:a{2000}){2000}` is 17 characters and compiles to 4,000,000 steps (a second and a
    gigabyte, which no time limit interrupts): counted repeats multiply, and past
    MAX_REPEAT_PRODUCT the pattern is refused before it is compiled."""
    for pattern in ("(?:a{200}){200}", "a{101}b{100}", "(?:x{1,5000}){3}"):
        with pytest.raises(InvalidParameters, match="counted repeats"):
            apply(name, {"column": "name", "pattern": pattern, **extra})
    # Verbose mode lets a count hold spaces and comments ({ 200}, {2#c\n00}): refused.
    for pattern in ("(?x)(?:a{ 200}){ 200}", "(?i-x:a{2#c\n00})", "(?sx:a)"):
        with pytest.raises(InvalidParameters, match="verbose"):
            apply(name, {"column": "name", "pattern": pattern, **extra})
    fine = apply(name, {"column": "name", "pattern": r"^\s*\w{2}(?:\w{1,3}){1,10}", **extra})
    assert fine.message.startswith("regex_replace" if name == "regex_replace" else "2 rows match")


def test_replace_missing_turns_tokens_into_missing_cells() -> None:
    result = apply("replace_missing", {"tokens": ["n/a", "-"]})
    assert values(result.table, "name") == ["  ana lópez ", "BOB", None, None]
    assert values(result.table, "city") == ["NYC", "new york", None, "Boston"]
    only_city = apply("replace_missing", {"tokens": ["-"], "columns": ["city"]})
    assert values(only_city.table, "name") == values(table(), "name")


@pytest.mark.parametrize(
    ("text", "convention", "iso"),
    [
        ("03/04/2024", "us", "2024-03-04"),
        ("03/04/2024", "eu", "2024-04-03"),
        ("31.12.2024", "eu", "2024-12-31"),
        ("31/12/2024", "us", None),
        ("2024-1-5", "iso", "2024-01-05"),
        ("03/04/2024", "iso", None),
        ("Jan 7, 2024", "us", "2024-01-07"),
        ("7 January 2024", "eu", "2024-01-07"),
        ("02/30/2024", "us", None),
        ("soon", "us", None),
    ],
)
def test_dates_are_read_under_the_convention(text, convention, iso) -> None:
    assert to_iso(text, convention) == iso


def test_normalize_dates_reports_cells_it_cannot_read() -> None:
    frame = pd.DataFrame({"d": ["03/04/2024", "2024-01-05", "31/12/2024", None]})
    op, params = resolve("normalize_dates", {"column": "d", "convention": "us"})
    result = op.apply(frame, params, OpContext())
    assert values(result.table, "d") == ["2024-03-04", "2024-01-05", "31/12/2024", None]
    assert result.message == (
        "normalize_dates: d (1). Left as they were (not a date under us): '31/12/2024'."
    )


@pytest.mark.parametrize(
    ("text", "phone"),
    [
        ("555-123-4567", "(555) 123-4567"),
        ("+1 (555) 987 6543", "(555) 987-6543"),
        ("5551234567", "(555) 123-4567"),
        ("123", None),
        ("2 555 123 4567", None),
    ],
)
def test_us_phone_numbers(text, phone) -> None:
    assert to_us_phone(text) == phone


def test_decimal2_and_integer() -> None:
    result = apply("decimal2", {"column": "amount"})
    assert values(result.table, "amount") == [1234.57, 2.0, 3.5, None]
    assert kind_of(result.table["amount"].dtype) == "float"
    with pytest.raises(OperationFailed, match=r"not numbers: '  ana lópez ', 'BOB', 'N/A'$"):
        apply("decimal2", {"column": "name"})
    whole = pd.DataFrame({"n": ["1", "2,000"]})
    op, params = resolve("integer", {"column": "n"})
    assert op.apply(whole, params, OpContext()).table["n"].tolist() == [1, 2000]
    with pytest.raises(OperationFailed):
        apply("integer", {"column": "amount"})


def test_clamp_outliers_keeps_rows_and_missing_cells() -> None:
    result = apply("clamp_outliers", {"column": "score", "low": 0, "high": 100})
    assert values(result.table, "score") == [5.0, 100.0, 0.0, None]
    assert len(result.table) == 4
    with pytest.raises(OperationFailed, match="not numeric"):
        apply("clamp_outliers", {"column": "amount", "low": 0, "high": 1})
    with pytest.raises(InvalidParameters):
        apply("clamp_outliers", {"column": "score", "low": 2, "high": 1})


def test_dedupe_keeps_the_first_row_of_each_key() -> None:
    frame = pd.DataFrame({"email": ["a@x", "b@x", "a@x"], "name": ["Ana", "Bo", "ANA"]})
    op, params = resolve("dedupe", {"keys": ["email"]})
    result = op.apply(frame, params, OpContext())
    assert result.table.to_dict("list") == {"email": ["a@x", "b@x"], "name": ["Ana", "Bo"]}
    assert list(result.table.index) == [0, 1]


@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("strip", {"column": "nope"}),
        ("strip", {"column": 5}),
        ("lower", {"columns": ["name"]}),
        ("replace", {"column": "name", "old_value": "a"}),
        ("replace", {"column": "name", "old_value": [1], "new_value": "b"}),
        ("map", {"column": "name", "mapping": {}}),
        ("map", {"column": "name", "mapping": "a=b"}),
        ("regex_replace", {"column": "name", "pattern": "", "replacement": ""}),
        ("regex_replace", {"column": "name", "pattern": "a" * 201, "replacement": ""}),
        ("replace_missing", {"tokens": []}),
        ("replace_missing", {"tokens": ["-"], "columns": ["nope"]}),
        ("normalize_dates", {"column": "name"}),
        ("normalize_dates", {"column": "name", "convention": "uk"}),
        ("phone_us", {}),
        ("decimal2", {"column": "nope"}),
        ("clamp_outliers", {"column": "score", "low": "0", "high": 1}),
        ("dedupe", {"keys": []}),
        ("dedupe", {"keys": ["nope"]}),
        ("integer", {"column": "amount", "dtype": "float"}),
    ],
)
def test_bad_parameters_are_refused(name, parameters) -> None:
    with pytest.raises(InvalidParameters):
        apply(name, parameters)


def test_text_operations_refuse_columns_that_are_not_text() -> None:
    for name in ("strip", "lower", "phone_us"):
        with pytest.raises(OperationFailed, match="not text"):
            apply(name, {"column": "score"})


PROTECTED = OpContext(protected_columns=frozenset({"id", "name"}))


@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("strip", {"column": "name"}),
        ("map", {"column": "name", "mapping": {"BOB": "Bob"}}),
        ("decimal2", {"column": "id"}),
        ("clamp_outliers", {"column": "id", "low": 0, "high": 1}),
        ("fill_missing", {"strategy": "mode", "column": "name"}),
        ("fix_dtype", {"dtype": "str", "column": "id"}),
        ("rename_columns", {"mapping": {"id": "key"}}),
    ],
)
def test_protected_key_columns_cannot_be_modified(name, parameters) -> None:
    with pytest.raises(InvalidParameters, match="protected"):
        apply(name, parameters, PROTECTED)


def test_operations_over_all_columns_skip_protected_ones() -> None:
    assert values(apply("upper", {}, PROTECTED).table, "name") == values(table(), "name")
    filled = apply("fill_missing", {"strategy": "mode"}, PROTECTED)
    assert values(filled.table, "name") == values(table(), "name")
    assert values(filled.table, "city") == values(table(), "city")
    assert values(filled.table, "score") == [5.0, 500.0, -3.0, -3.0]
    renamed = apply("rename_columns", {}, PROTECTED)
    assert list(renamed.table.columns) == ["id", "name", "city", "amount", "score"]
    typed = apply("fix_dtype", {"dtype": "str"}, PROTECTED)
    assert kind_of(typed.table["id"].dtype) == "int"


def test_every_refusal_is_an_env_error_with_a_code() -> None:
    with pytest.raises(EnvError) as raised:
        apply("strip", {"column": "nope"})
    assert raised.value.code == "INVALID_PARAMETERS"


def test_fd_repair_makes_a_column_constant_per_key_by_majority() -> None:
    frame = pd.DataFrame(
        {"cid": [1, 1, 1, 2, 2, None], "email": ["a@x", "a@x", "A@X", "b@x", None, "z"]}
    )
    op, params = resolve("fd_repair", {"key": "cid", "column": "email"})
    result = op.apply(frame, params, OpContext())
    assert values(result.table, "email") == ["a@x", "a@x", "a@x", "b@x", None, "z"]
    assert result.message == "fd_repair: email (1)."
    tie = pd.DataFrame({"k": [1, 1], "v": ["second", "first"]})
    op, params = resolve("fd_repair", {"key": "k", "column": "v"})
    assert values(op.apply(tie, params, OpContext()).table, "v") == ["second", "second"]
    with pytest.raises(InvalidParameters):
        resolve("fd_repair", {"key": "k", "column": "k"})[0].apply(
            tie, resolve("fd_repair", {"key": "k", "column": "k"})[1], OpContext()
        )


ALLOWED = OpContext(allowed_operations=frozenset({"strip", "upper", "decimal2", "title"}))


def test_program_applies_its_steps_in_order_as_one_step() -> None:
    steps = [{"operation": "strip"}, {"name": "title", "params": {"column": "name"}}]
    result = apply("program", {"operations": steps}, ALLOWED)
    assert values(result.table, "name") == ["Ana López", "Bob", "N/A", None]
    assert result.message == "strip: name (1). | title: name (2)."


@pytest.mark.parametrize(
    ("steps", "error", "text"),
    [
        (
            [{"operation": "strip"}, {"operation": "decimal2", "parameters": {"column": "name"}}],
            OperationFailed,
            r"step 2 \(decimal2\)",
        ),
        ([{"operation": "finish"}], InvalidParameters, "cannot run inside a program"),
        (
            [{"operation": "program", "parameters": {"operations": []}}],
            InvalidParameters,
            "program",
        ),
        ([{"operation": "lower"}], EnvError, "not available"),
        ([{"parameters": {}}], InvalidParameters, "step 1 is not an action"),
        ([{"operation": "strip"}] * 21, InvalidParameters, "operations"),
    ],
)
def test_program_is_all_or_nothing(steps, error, text) -> None:
    with pytest.raises(error, match=text):
        apply("program", {"operations": steps}, ALLOWED)
