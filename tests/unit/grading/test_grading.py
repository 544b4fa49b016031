"""Exact values of the grading components, penalties and the clamped reward.

A hand-made task: gold has 4 rows keyed by "id"; the dirty table has one duplicate row, two
missing cells, a number column stored as text, an outlier row and two bad headers. Every
expected error count and score below is worked out by hand from DESIGN.md's definitions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dataclean_env.grading import ActionRecord, Grader, build_facts, clamp, penalty
from dataclean_env.grading.components import (
    COMPONENTS,
    component_score,
    dtype_errors,
    duplicate_errors,
    missing_errors,
    outlier_errors,
    schema_errors,
)
from dataclean_env.grading.gold_facts import key_text
from dataclean_env.grading.preservation import _CANONICAL, _EQUAL
from dataclean_env.grading.reward import reward_object
from dataclean_env.operations import get_operation
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import cells_equal
from tests.support import REWARD_FIELDS

WEIGHTS = {
    "duplicate_score": 0.2,
    "missing_score": 0.2,
    "dtype_score": 0.2,
    "outlier_score": 0.2,
    "schema_score": 0.2,
}


def gold_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [1, 2, 3, 4],
            "name": ["a", "b", "c", "d"],
            "score": [10.5, 20.0, 30.0, 40.0],
            "qty": [1, 2, 3, 4],
        }
    )


def dirty_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "ID": [1, 2, 2, 3, 4, 99],  # header snake_cases to the key "id"
            "Name": ["a", "b", "b", "c", None, "z"],  # bad header, one missing cell
            "score": [10.5, 20.0, 20.0, np.nan, 40.0, 9999.0],  # one missing cell
            "qty": ["1", "2", "2", "3", "4", "5"],  # numbers stored as text
        }
    )


@pytest.fixture(scope="module")
def grader() -> Grader:
    dirty = dirty_table()
    facts = build_facts(dirty, gold_table(), "id")
    return Grader.for_task(facts, WEIGHTS, dirty)


def errors(grader: Grader, table: pd.DataFrame) -> dict[str, int]:
    keyed = grader.facts.keyed(Snapshot.of(table))
    return {name: counter(grader.facts, keyed) for name, counter in COMPONENTS.items()}


def scores(grader: Grader, table: pd.DataFrame) -> dict[str, float]:
    return grader.components(Snapshot.of(table))


def reward(grader: Grader, table: pd.DataFrame, history: list[ActionRecord] | None = None):
    return grader.reward(Snapshot.of(table), history or [], 20)


def record(name: str, parameters: dict[str, Any] | None = None) -> ActionRecord:
    op = get_operation(name)
    return ActionRecord(name, parameters or {}, op.rank, op.repeatable)


def snake(table: pd.DataFrame) -> pd.DataFrame:
    return table.rename(columns={"ID": "id", "Name": "name"})


# ── facts ───────────────────────────────────────────────────────────────────


def test_facts_of_the_pair(grader: Grader) -> None:
    facts = grader.facts
    assert facts.key == "id"
    assert facts.kinds == {"id": "int", "name": "str", "score": "float", "qty": "int"}
    assert facts.gold_keys == frozenset({"1", "2", "3", "4"})
    assert facts.outlier_keys == frozenset({"99"})
    assert facts.missing_targets == (("3", "score", 30.0), ("4", "name", "d"))
    assert facts.n_rows == 4


def test_baseline_is_the_dirty_error_count(grader: Grader) -> None:
    # duplicate: key 2 twice. missing: the two cells. dtype: id and name absent (4 + 4), qty
    # text (4). outlier: row 99. schema: id, name absent, qty wrong kind, ID and Name extra.
    assert dict(grader.baseline) == {
        "duplicate_score": 1,
        "missing_score": 2,
        "dtype_score": 12,
        "outlier_score": 1,
        "schema_score": 5,
    }
    assert errors(grader, dirty_table()) == {
        "duplicate_score": 1,
        "missing_score": 2,
        "dtype_score": 12,
        "outlier_score": 1,
        "schema_score": 5,
    }


def test_header_map_names_the_gold_column_of_a_dirty_header() -> None:
    gold = gold_table()
    dirty = dirty_table().rename(columns={"Name": "Nm"})  # snake_case "nm" is not gold's
    assert build_facts(dirty, gold, "id").missing_targets == (("3", "score", 30.0),)
    mapped = build_facts(dirty, gold, "id", header_map={"Nm": "name"})
    assert mapped.missing_targets == (("3", "score", 30.0), ("4", "name", "d"))


def test_gold_key_must_be_unique_and_complete() -> None:
    gold = gold_table()
    gold.loc[3, "id"] = 1
    with pytest.raises(ValueError):
        build_facts(dirty_table(), gold, "id")


def test_unknown_scoring_component_is_rejected() -> None:
    dirty = dirty_table()
    facts = build_facts(dirty, gold_table(), "id")
    with pytest.raises(ValueError):
        Grader.for_task(facts, {"style_score": 1.0}, dirty)


# ── component scores ────────────────────────────────────────────────────────


def test_component_score_formula() -> None:
    assert component_score(0, 4) == 1.0
    assert component_score(1, 4) == 0.75
    assert component_score(4, 4) == 0.0
    assert component_score(9, 4) == 0.0  # floored at 0
    assert component_score(0, 0) == 1.0  # nothing to fix, nothing broken
    assert component_score(1, 0) == 0.0  # nothing to fix, but something broken


def test_doing_nothing_scores_zero_everywhere(grader: Grader) -> None:
    assert scores(grader, dirty_table()) == {name: 0.0 for name in WEIGHTS}
    assert reward(grader, dirty_table()) == {field: 0.0001 for field in REWARD_FIELDS}


def test_partial_fix_rename_only(grader: Grader) -> None:
    table = snake(dirty_table())
    assert errors(grader, table) == {
        "duplicate_score": 1,
        "missing_score": 2,
        "dtype_score": 4,  # only qty (text) is of the wrong kind
        "outlier_score": 1,
        "schema_score": 1,
    }
    got = reward(grader, table)
    assert got == {
        "total": 0.2933,  # 0.2 * (2/3 + 0.8)
        "duplicate_score": 0.0001,
        "missing_score": 0.0001,
        "dtype_score": 0.6667,
        "outlier_score": 0.0001,
        "schema_score": 0.8,
        "penalty": 0.0001,
    }


def test_partial_fix_dedup_rename_fill(grader: Grader) -> None:
    table = snake(dirty_table()).drop(index=2).reset_index(drop=True)
    table.loc[2, "score"] = 30.0
    table.loc[3, "name"] = "d"
    assert errors(grader, table) == {
        "duplicate_score": 0,
        "missing_score": 0,
        "dtype_score": 4,
        "outlier_score": 1,
        "schema_score": 1,
    }
    got = reward(grader, table)
    assert got["total"] == 0.6933  # 0.2 * (1 + 1 + 2/3 + 0 + 0.8)
    assert got["duplicate_score"] == 0.9999
    assert got["missing_score"] == 0.9999
    assert got["dtype_score"] == 0.6667
    assert got["outlier_score"] == 0.0001
    assert got["schema_score"] == 0.8


def test_only_removing_the_outlier(grader: Grader) -> None:
    table = dirty_table().iloc[:5]
    assert errors(grader, table)["outlier_score"] == 0
    assert scores(grader, table)["outlier_score"] == 1.0
    assert reward(grader, table)["total"] == 0.2


def test_full_fix_scores_the_ceiling(grader: Grader) -> None:
    table = gold_table().iloc[::-1].reset_index(drop=True)
    assert errors(grader, table) == {name: 0 for name in WEIGHTS}
    assert scores(grader, table) == {name: 1.0 for name in WEIGHTS}
    got = reward(grader, table)
    assert got == {**{field: 0.9999 for field in REWARD_FIELDS}, "penalty": 0.0001}


def test_row_order_is_ignored(grader: Grader) -> None:
    table = snake(dirty_table())
    shuffled = table.iloc[[5, 3, 0, 4, 2, 1]].reset_index(drop=True)
    assert errors(grader, shuffled) == errors(grader, table)
    assert reward(grader, shuffled) == reward(grader, table)


# ── damage on the fixed table ───────────────────────────────────────────────


def test_damage_dropped_good_row(grader: Grader) -> None:
    table = gold_table().iloc[:3]  # id 4 lost (and with it the filled name "d")
    assert errors(grader, table) == {
        "duplicate_score": 1,
        "missing_score": 1,
        "dtype_score": 4,
        "outlier_score": 1,
        "schema_score": 0,
    }
    got = reward(grader, table)
    assert got["total"] == 0.4333  # 0.2 * (0 + 0.5 + 2/3 + 0 + 1)
    assert got["missing_score"] == 0.5
    assert got["dtype_score"] == 0.6667


def test_damage_junk_fill(grader: Grader) -> None:
    table = gold_table()
    table.loc[3, "name"] = "junk"
    assert errors(grader, table)["missing_score"] == 1
    got = reward(grader, table)
    assert got["missing_score"] == 0.5
    assert got["total"] == 0.9


@pytest.mark.parametrize(
    ("value", "missing_errors_expected"),
    [(30.0, 0), (30.004, 0), ("30", 0), ("$30.00", 0), (30.01, 1), (29.99, 1), (0.0, 1)],
)
def test_filled_numbers_compare_within_two_decimals(
    grader: Grader, value: Any, missing_errors_expected: int
) -> None:
    table = gold_table().astype({"score": object})
    table.loc[2, "score"] = value
    assert missing_errors(grader.facts, grader.facts.keyed(Snapshot.of(table))) == (
        missing_errors_expected
    )


def test_damage_renamed_column_away(grader: Grader) -> None:
    table = gold_table().rename(columns={"score": "x_junk"})
    assert errors(grader, table) == {
        "duplicate_score": 0,
        "missing_score": 1,  # the filled score cell is gone with its column
        "dtype_score": 4,
        "outlier_score": 0,
        "schema_score": 2,  # score absent, x_junk extra
    }
    assert reward(grader, table)["total"] == 0.7533  # 0.2 * (1 + 0.5 + 2/3 + 1 + 0.6)


def test_damage_renamed_key_away(grader: Grader) -> None:
    table = gold_table().rename(columns={"id": "x_junk"})
    # Without a key column no row can be aligned: 4 gold rows lost, 4 rows gold never had.
    assert errors(grader, table) == {
        "duplicate_score": 8,
        "missing_score": 2,
        "dtype_score": 16,
        "outlier_score": 4,
        "schema_score": 2,
    }
    assert reward(grader, table)["total"] == 0.12  # 0.2 * 0.6


@pytest.mark.parametrize("dtype", ["float64", "str", object])
def test_damage_wrong_cast(grader: Grader, dtype: Any) -> None:
    table = gold_table()
    table["qty"] = table["qty"].astype(dtype) if dtype != "str" else table["qty"].astype(str)
    assert errors(grader, table) == {
        "duplicate_score": 0,
        "missing_score": 0,
        "dtype_score": 4,
        "outlier_score": 0,
        "schema_score": 1,
    }
    assert reward(grader, table)["total"] == 0.8933  # 0.2 * (3 + 2/3 + 0.8)


def test_damage_filled_column_cast_to_text_keeps_its_values(grader: Grader) -> None:
    table = gold_table()
    table["score"] = [str(v) for v in table["score"]]
    assert errors(grader, table)["missing_score"] == 0
    assert errors(grader, table)["dtype_score"] == 4


def test_extra_copy_of_a_gold_row(grader: Grader) -> None:
    table = pd.concat([gold_table(), gold_table().iloc[[0]]], ignore_index=True)
    assert errors(grader, table) == {
        "duplicate_score": 1,
        "missing_score": 0,
        "dtype_score": 0,
        "outlier_score": 0,
        "schema_score": 0,
    }
    assert reward(grader, table)["total"] == 0.8


def test_first_copy_of_a_key_is_the_one_graded(grader: Grader) -> None:
    table = pd.concat([gold_table(), gold_table().iloc[[3]]], ignore_index=True)
    table.loc[3, "name"] = None  # the first copy of id 4 is still missing its name
    assert errors(grader, table)["missing_score"] == 1
    table = pd.concat([gold_table(), gold_table().iloc[[3]]], ignore_index=True)
    table.loc[4, "name"] = None  # a later copy does not matter
    assert errors(grader, table)["missing_score"] == 0


def outlier_row(key: int = 99) -> pd.DataFrame:
    return pd.DataFrame({"id": [key], "name": ["z"], "score": [9999.0], "qty": [5]})


def test_outlier_row_kept(grader: Grader) -> None:
    table = pd.concat([gold_table(), outlier_row()], ignore_index=True)
    got = errors(grader, table)
    assert got["outlier_score"] == 1
    assert got["duplicate_score"] == 0  # a single outlier row is not a duplicate error
    assert reward(grader, table)["total"] == 0.8


def test_outlier_row_kept_twice(grader: Grader) -> None:
    table = pd.concat([gold_table(), outlier_row(), outlier_row()], ignore_index=True)
    got = errors(grader, table)
    assert got["outlier_score"] == 1
    assert got["duplicate_score"] == 1  # its extra copy is
    assert reward(grader, table)["total"] == 0.6


def test_row_gold_never_had(grader: Grader) -> None:
    table = pd.concat([gold_table(), outlier_row(key=77)], ignore_index=True)
    got = errors(grader, table)
    assert got["duplicate_score"] == 1
    assert got["outlier_score"] == 0
    assert reward(grader, table)["total"] == 0.8


def test_extra_column(grader: Grader) -> None:
    table = gold_table().assign(note=["x", "y", "z", "w"])
    assert errors(grader, table)["schema_score"] == 1
    assert reward(grader, table)["total"] == 0.96


def test_individual_error_counters(grader: Grader) -> None:
    facts = grader.facts
    keyed = facts.keyed(Snapshot.of(gold_table().iloc[1:]))  # id 1 lost
    assert duplicate_errors(facts, keyed) == 1
    assert missing_errors(facts, keyed) == 0  # id 1 had no missing cell
    assert dtype_errors(facts, keyed) == 4
    assert outlier_errors(facts, keyed) == 1
    assert schema_errors(facts, keyed) == 0


def test_component_with_nothing_to_fix() -> None:
    gold = gold_table()
    dirty = gold.copy()
    facts = build_facts(dirty, gold, "id")
    grader = Grader.for_task(facts, {"duplicate_score": 0.5, "schema_score": 0.5}, dirty)
    assert dict(grader.baseline) == {"duplicate_score": 0, "schema_score": 0}
    assert grader.components(Snapshot.of(gold)) == {"duplicate_score": 1.0, "schema_score": 1.0}
    doubled = pd.concat([gold, gold.iloc[[0]]], ignore_index=True)
    assert grader.components(Snapshot.of(doubled)) == {
        "duplicate_score": 0.0,
        "schema_score": 1.0,
    }


def test_unweighted_components_are_reported_at_the_floor() -> None:
    dirty = dirty_table()
    facts = build_facts(dirty, gold_table(), "id")
    grader = Grader.for_task(facts, {"duplicate_score": 0.5, "schema_score": 0.5}, dirty)
    got = grader.reward(Snapshot.of(gold_table()), [], 10)
    assert got == {
        "total": 0.9999,
        "duplicate_score": 0.9999,
        "missing_score": 0.0001,
        "dtype_score": 0.0001,
        "outlier_score": 0.0001,
        "schema_score": 0.9999,
        "penalty": 0.0001,
    }


# ── key canonicalisation ────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "value", [1001, 1001.0, "1001", " 1001 ", "1001.0", np.int64(1001), np.float64(1001.0)]
)
def test_key_text_canonicalises_numbers(value: Any) -> None:
    assert key_text(value) == "1001"


def test_key_text_other_values() -> None:
    assert key_text(1001.5) == "1001.5"
    assert key_text("A-7") == "A-7"
    assert key_text(" A-7 ") == "A-7"
    assert key_text(None) is None
    assert key_text(float("nan")) is None


@pytest.mark.parametrize("keys", [[1.0, 2.0, 3.0, 4.0], ["1", "2", "3", "4"], ["1", 2.0, 3, " 4 "]])
def test_keys_of_another_type_align_with_gold(grader: Grader, keys: list[Any]) -> None:
    table = gold_table()
    table["id"] = pd.Series(keys)  # float, text, or mixed objects
    table = table.iloc[::-1].reset_index(drop=True)
    # Every row aligns; only the key column's type is wrong.
    assert errors(grader, table) == {
        "duplicate_score": 0,
        "missing_score": 0,
        "dtype_score": 4,
        "outlier_score": 0,
        "schema_score": 1,
    }


def test_key_spellings_are_one_row(grader: Grader) -> None:
    table = pd.DataFrame(
        {
            "id": pd.Series([1, 1.0, "1", 2, 3, 4], dtype=object),
            "name": ["a", "a", "a", "b", "c", "d"],
            "score": [10.5, 10.5, 10.5, 20.0, 30.0, 40.0],
            "qty": [1, 1, 1, 2, 3, 4],
        }
    )
    assert errors(grader, table)["duplicate_score"] == 2  # two extra copies of row 1


# ── penalties ───────────────────────────────────────────────────────────────

PLAN = [
    record("remove_duplicates"),
    record("rename_columns", {"mapping": {"a": "b"}}),
    record("fill_missing", {"strategy": "mean"}),
    record("fill_missing", {"strategy": "mode"}),
    record("fix_dtype", {"dtype": "auto"}),
    record("remove_outliers", {"method": "iqr", "column": "x"}),
    record("validate_schema"),
    record("finish"),
]


def test_no_history_no_penalty() -> None:
    assert penalty([], 10) == 0.0


def test_pipeline_order_is_free() -> None:
    assert penalty(PLAN, 20) == 0.0


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["fix_dtype", "fill_missing"], 0.08),
        (["remove_outliers", "remove_duplicates"], 0.08),
        (["finish", "validate_schema"], 0.08),
        (["fill_missing", "rename_columns"], 0.08),
        (["fix_dtype", "fill_missing", "fix_dtype", "remove_duplicates"], 0.16),
        # Compared with the step before, not with the highest rank so far.
        (["fix_dtype", "rename_columns", "fill_missing"], 0.08),
        (["remove_duplicates", "finish"], 0.0),
    ],
)
def test_out_of_order_steps(names: list[str], expected: float) -> None:
    history = [record(n, {"step": i}) for i, n in enumerate(names)]
    assert penalty(history, 20) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        ([record("validate_schema"), record("validate_schema")], 0.02),
        ([record("validate_schema")] * 3, 0.04),
        ([record("remove_duplicates"), record("remove_duplicates")], 0.02),
        ([record("fix_dtype", {"dtype": "auto"})] * 2, 0.02),
        ([record("rename_columns", {})] * 2, 0.02),
        ([record("remove_outliers", {"method": "iqr", "column": "p"})] * 2, 0.02),
        # Different parameters: a different step.
        (
            [
                record("fix_dtype", {"dtype": "int", "column": "a"}),
                record("fix_dtype", {"dtype": "int", "column": "b"}),
            ],
            0.0,
        ),
        ([record("remove_duplicates"), record("remove_duplicates", {"subset": ["a"]})], 0.0),
        # Fill steps may repeat, identically or with another strategy.
        ([record("fill_missing", {"strategy": "mean"})] * 2, 0.0),
        ([record("fill_missing", {"strategy": "mean"})] * 4, 0.0),
        (
            [
                record("fill_missing", {"strategy": "mean"}),
                record("fill_missing", {"strategy": "mode"}),
                record("fill_missing", {"strategy": "median", "column": "a"}),
                record("fill_missing", {"strategy": "mean"}),
            ],
            0.0,
        ),
        # Not immediate: the step in between breaks the repeat.
        (
            [
                record("fix_dtype", {"dtype": "auto"}),
                record("fix_dtype", {"dtype": "int", "column": "a"}),
                record("fix_dtype", {"dtype": "auto"}),
            ],
            0.0,
        ),
    ],
)
def test_identical_repeats(history: list[ActionRecord], expected: float) -> None:
    assert penalty(history, 20) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("steps", "max_steps", "expected"),
    [
        (8, 10, 0.0),
        (9, 10, 0.05),
        (10, 10, 0.05),
        (16, 20, 0.0),
        (17, 20, 0.05),
        (12, 15, 0.0),
        (13, 15, 0.05),
    ],
)
def test_late_steps(steps: int, max_steps: int, expected: float) -> None:
    history = [record("fill_missing", {"strategy": "mean"})] * steps
    assert penalty(history, max_steps) == expected


def test_penalties_add_up() -> None:
    history = [
        record("validate_schema"),
        record("validate_schema"),  # repeat 0.02
        record("fill_missing", {"strategy": "mean"}),  # out of order 0.08
        *[record("fill_missing", {"strategy": "mean"})] * 6,  # 9 steps of 10: late 0.05
    ]
    assert penalty(history, 10) == pytest.approx(0.15)


def test_penalty_is_capped() -> None:
    history = [record("fix_dtype", {"dtype": "auto"}), record("fill_missing")] * 5
    assert penalty(history, 100) == 0.25  # 4 out-of-order steps = 0.32, capped
    assert penalty(history + [record("rename_columns")] * 6, 10) == 0.25


# ── reward: penalties, clamping ─────────────────────────────────────────────


def test_reward_subtracts_the_penalty(grader: Grader) -> None:
    history = [record("fix_dtype", {"dtype": "auto"}), record("fill_missing")]
    got = grader.reward(Snapshot.of(gold_table()), history, 20)
    assert got["penalty"] == 0.08
    assert got["total"] == 0.92
    assert got["duplicate_score"] == 0.9999
    table = snake(dirty_table())
    got = grader.reward(Snapshot.of(table), history, 20)
    assert got["total"] == 0.2133  # 0.29333 - 0.08


def test_penalty_cannot_take_total_below_the_floor(grader: Grader) -> None:
    history = [record("fix_dtype", {"dtype": "auto"}), record("fill_missing")] * 5
    got = grader.reward(Snapshot.of(dirty_table()), history, 20)
    assert got["total"] == 0.0001
    assert got["penalty"] == 0.25


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (-1.0, 0.0001),
        (0.0, 0.0001),
        (0.00004, 0.0001),
        (0.0001, 0.0001),
        (0.12344, 0.1234),
        (0.12346, 0.1235),
        (0.5, 0.5),
        (0.99994, 0.9999),
        (1.0, 0.9999),
        (3.0, 0.9999),
    ],
)
def test_reported_value_is_clamped_and_rounded(value: float, expected: float) -> None:
    assert reward_object({"total": clamp(value)}) == {"total": expected}


def test_clamp_keeps_full_precision() -> None:
    # A single fixed cell of a large table moves the score by less than 0.0001: the score
    # (and the /ws reward built from it) must still see it.
    assert clamp(0.12344) == 0.12344
    assert clamp(0.50004) == 0.50004


@pytest.mark.parametrize(
    "table",
    [
        dirty_table(),
        snake(dirty_table()),
        gold_table(),
        gold_table().iloc[:2],
        gold_table().rename(columns={"id": "x"}),
        pd.DataFrame({"id": [1]}),
        pd.DataFrame(),
    ],
    ids=["dirty", "renamed", "gold", "half", "nokey", "onecol", "empty"],
)
@pytest.mark.parametrize("history_length", [0, 3, 19])
def test_every_reward_field_is_clamped_and_rounded(
    grader: Grader, table: pd.DataFrame, history_length: int
) -> None:
    history = [record("fix_dtype"), record("fill_missing"), record("finish")] * 7
    got = grader.reward(Snapshot.of(table), history[:history_length], 20)
    assert list(got) == REWARD_FIELDS
    for field, value in got.items():
        assert 0.0001 <= value <= 0.9999, field
        assert round(value, 4) == value, field


# ── the preservation grader's fast comparison agrees with cells_equal ──────────

_PAIRS = {
    "int": (st.integers(-(10**6), 10**6), st.integers(-(10**6), 10**6)),
    "float": (
        st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 3)),
        st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 3)),
    ),
    "bool": (st.booleans(), st.booleans()),
    "str": (st.text(max_size=4), st.text(max_size=4)),
    "datetime": (
        st.dates().map(pd.Timestamp),
        st.dates().map(pd.Timestamp),
    ),
}


@pytest.mark.parametrize("kind", list(_PAIRS))
@settings(max_examples=200, deadline=None, derandomize=True)
@given(data=st.data())
def test_fast_cell_comparison_agrees_with_cells_equal(kind, data) -> None:
    cell_strategy, gold_strategy = _PAIRS[kind]
    gold = data.draw(gold_strategy)
    cell = data.draw(st.one_of(cell_strategy, st.just(gold)))
    canonical = _CANONICAL.get(kind, lambda v: v)(gold)
    assert _EQUAL[kind](cell, canonical) == cells_equal(cell, gold, kind)
