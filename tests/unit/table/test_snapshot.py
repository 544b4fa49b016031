"""Snapshots that operations derive cheaply equal a fresh read of the resulting table."""

from __future__ import annotations

import pytest

from dataclean_env.errors import EnvError
from dataclean_env.operations import OpContext, resolve
from dataclean_env.table.snapshot import Snapshot
from tests.support import TASK_IDS

EXTRA_ACTIONS = [
    {"operation": "remove_duplicates", "parameters": {}},
    {"operation": "rename_columns", "parameters": {}},
    {"operation": "fill_missing", "parameters": {"strategy": "mode"}},
    {"operation": "fill_missing", "parameters": {"strategy": "ffill"}},
    {"operation": "fill_missing", "parameters": {"strategy": "constant", "value": "x"}},
    {"operation": "fix_dtype", "parameters": {"dtype": "auto"}},
    {"operation": "fix_dtype", "parameters": {"dtype": "str"}},
    {"operation": "remove_outliers", "parameters": {"method": "zscore", "threshold": 1.0}},
    {"operation": "remove_outliers", "parameters": {"method": "iqr", "threshold": 0.5}},
]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_derived_snapshots_match_a_fresh_read(task_id, registry, metadata) -> None:
    table = registry.make(task_id, 3).dirty
    derived = 0
    for planned in metadata[task_id]["solution"]:
        for action in [*EXTRA_ACTIONS, planned]:
            op, params = resolve(action["operation"], action["parameters"])
            try:
                result = op.apply(table, params, OpContext(snapshot=Snapshot.of(table)))
            except EnvError:
                continue
            if result.snapshot is not None:
                derived += 1
                assert result.snapshot == Snapshot.of(result.table), action
            if action is planned:
                table = result.table
    assert derived >= 10
