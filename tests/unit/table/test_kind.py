"""The `Kind` type: one name per column kind, and the same text on every wire as before."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, get_args

import pandas as pd
import pytest

from dataclean_env.operations.dtypes import Dtype
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import NUMERIC_KINDS, Kind, dtype_name, kind_of
from dataclean_env.tasks.custom import TaskFile

pytestmark = pytest.mark.unit


def test_a_kind_is_its_string_in_json_text_and_comparisons() -> None:
    assert json.dumps({Kind.INT: [Kind.FLOAT, Kind.STR]}) == '{"int": ["float", "str"]}'
    assert f"{Kind.DATETIME} -> {Kind.BOOL}" == "datetime -> bool"
    assert Kind.INT == "int" and Kind.STR == "str"
    assert {"int": 1}[Kind.INT] == 1 and {Kind.INT: 1}["int"] == 1
    assert Kind("float") is Kind.FLOAT
    assert "int" in NUMERIC_KINDS and "bool" not in NUMERIC_KINDS


def test_kind_of_names_each_dtype_with_a_member() -> None:
    table = pd.DataFrame(
        {
            "i": [1, 2],
            "f": [1.5, None],
            "b": [True, False],
            "d": pd.to_datetime(["2024-01-02", "2024-03-04"]),
            "s": ["a", None],
            "n": pd.array([1, None], dtype="Int64"),
        }
    )
    kinds = Snapshot.of(table).kinds
    assert kinds == {
        "i": Kind.INT,
        "f": Kind.FLOAT,
        "b": Kind.BOOL,
        "d": Kind.DATETIME,
        "s": Kind.STR,
        "n": Kind.INT,
    }
    assert all(type(kind) is Kind for kind in kinds.values())
    assert [dtype_name(table[c].dtype) for c in "ifbdsn"] == [
        "int64",
        "float64",
        "bool",
        "datetime64",
        "object",
        "int64",
    ]
    assert kind_of(pd.Series([datetime(2024, 1, 2)]).dtype) is Kind.DATETIME


def test_the_wire_literals_name_exactly_the_kinds() -> None:
    # fix_dtype's `dtype` and task.json's `types` stay literals, so their JSON schema and
    # their validation messages read as before; they must still list every kind.
    assert set(get_args(Dtype)) == {"auto", *Kind}
    _, value = get_args(TaskFile.model_fields["types"].annotation)
    assert set(get_args(value)) == set(Kind)


def test_every_task_declares_its_target_schema_in_kinds(registry: Any) -> None:
    for spec in registry.specs():
        assert all(type(kind) is Kind for kind in spec.target_schema.values()), spec.task_id


def _dtypes(actions: Any) -> list[Any]:
    """Every `dtype` parameter in a list of action dicts, inside `fix` and `program` too."""
    found = []
    for action in actions:
        parameters = action.get("parameters", {})
        if "dtype" in parameters:
            found.append(parameters["dtype"])
        for inner in ("operations", "steps"):
            if isinstance(parameters.get(inner), list):
                found += _dtypes(parameters[inner])
    return found


def test_actions_the_engine_writes_hold_plain_strings(registry: Any) -> None:
    # A solution is JSON sent to agents and logged: its repr must not grow enum members.
    seen = []
    for spec in registry.specs():
        task = registry.make(spec.task_id, 0)
        dtypes = _dtypes(list(task.reference_plan or ()))
        assert all(type(d) is str for d in dtypes), (spec.task_id, dtypes)
        seen += dtypes
    assert {"int", "float", "bool"} <= set(seen)
