"""drop_rows, set_cell and show_rows: rows addressed by the protected key, exact results,
refusals that change nothing, and the sample window that show_rows moves."""

from __future__ import annotations

import pandas as pd
import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import InvalidParameters, OperationFailed
from dataclean_env.operations import OpContext, resolve
from dataclean_env.schemas import Action
from tests.unit.operations.test_operations import cells, refused

KEYED = OpContext(protected_columns=frozenset({"id"}))


def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [7, 8, 9, 8],
            "name": ["Ana", "Bo", "Cy", "bo "],
            "score": [1.5, 2.0, None, 2.0],
            "count": [1, 2, 3, 2],
            "when": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-02"]),
        }
    ).astype({"name": "str"})


def apply(name: str, parameters: dict, context: OpContext = KEYED):
    op, params = resolve(name, parameters)
    return op.apply(table(), params, context)


def test_drop_rows_drops_every_row_of_each_id() -> None:
    result = apply("drop_rows", {"row_ids": [8, "9"]})
    assert cells(result.table["id"]) == [7]
    assert result.message == "Dropped 3 rows (4 -> 1)."
    assert result.snapshot.values["name"] == ["Ana"]


def test_set_cell_writes_a_value_of_the_column_type_into_each_row_of_the_id() -> None:
    assert cells(
        apply("set_cell", {"row_id": 8, "column": "name", "value": "Bo"}).table["name"]
    ) == [
        "Ana",
        "Bo",
        "Cy",
        "Bo",
    ]
    assert cells(
        apply("set_cell", {"row_id": 9, "column": "score", "value": 3}).table["score"]
    ) == [
        1.5,
        2.0,
        3.0,
        2.0,
    ]
    assert cells(
        apply("set_cell", {"row_id": 7, "column": "score", "value": None}).table["score"]
    ) == [
        None,
        2.0,
        None,
        2.0,
    ]
    dated = apply("set_cell", {"row_id": 7, "column": "when", "value": "2025-05-06"}).table["when"]
    assert dated.tolist()[0] == pd.Timestamp("2025-05-06")
    assert (
        apply("set_cell", {"row_id": 7, "column": "count", "value": 5}).table["count"].dtype
        == "int64"
    )


@pytest.mark.parametrize(
    ("name", "parameters", "error"),
    [
        ("drop_rows", {"row_ids": []}, InvalidParameters),
        ("drop_rows", {"row_ids": [7, 99]}, InvalidParameters),
        ("drop_rows", {"row_ids": [1.5]}, InvalidParameters),
        ("drop_rows", {"row_ids": list(range(1001))}, InvalidParameters),
        ("set_cell", {"row_id": 99, "column": "name", "value": "x"}, InvalidParameters),
        ("set_cell", {"row_id": 7, "column": "nope", "value": "x"}, InvalidParameters),
        ("set_cell", {"row_id": 7, "column": "id", "value": 1}, InvalidParameters),
        ("set_cell", {"row_id": 7, "column": "score", "value": "high"}, InvalidParameters),
        ("set_cell", {"row_id": 7, "column": "count", "value": None}, InvalidParameters),
        ("set_cell", {"row_id": 7, "column": "count", "value": 10**30}, InvalidParameters),
        ("set_cell", {"row_id": 7, "column": "count", "value": 1.5}, InvalidParameters),
        ("set_cell", {"row_id": 7, "column": "count", "value": float("inf")}, InvalidParameters),
        ("set_cell", {"row_id": 7, "column": "score", "value": float("nan")}, InvalidParameters),
        ("set_cell", {"row_id": 7, "column": "when", "value": "May 6"}, InvalidParameters),
        ("set_cell", {"row_id": 7, "column": "name"}, InvalidParameters),
        ("show_rows", {"offset": -1}, InvalidParameters),
        ("show_rows", {"limit": 51}, InvalidParameters),
        ("show_rows", {"limit": 0}, InvalidParameters),
    ],
)
def test_bad_row_operations_are_refused_and_change_nothing(name, parameters, error) -> None:
    with pytest.raises(error):
        op, params = resolve(name, parameters)
        op.apply(table(), params, KEYED)


def test_row_ids_need_a_task_key() -> None:
    refused(table(), "drop_rows", {"row_ids": [7]}, OperationFailed)
    refused(table(), "set_cell", {"row_id": 7, "column": "name", "value": "x"}, OperationFailed)


def test_row_ids_survive_drops_and_show_rows_moves_the_sample(registry) -> None:
    task = registry.make("crm", 3, "eval")
    episode = Episode("rows", task)
    first = episode.observation()
    assert first.sample_offset == 0 and len(first.sample_rows) == 5
    ids = task.dirty["contact_id"].tolist()
    table, reward = episode.table, episode.reward
    result = episode.step(Action(operation="show_rows", parameters={"offset": 10, "limit": 7}))
    assert result.observation.sample_offset == 10
    assert [r["contact_id"] for r in result.observation.sample_rows] == ids[10:17]
    assert episode.table is table and result.reward == reward  # looking changes nothing
    episode.step(Action(operation="drop_rows", parameters={"row_ids": [ids[0]]}))
    survivors = [i for i in ids if i != ids[0]]
    after = episode.observation()
    assert [r["contact_id"] for r in after.sample_rows] == survivors[10:17]  # window kept
    result = episode.step(
        Action(
            operation="set_cell",
            parameters={"row_id": ids[12], "column": "segment", "value": "smb"},
        )
    )
    assert {r["segment"] for r in result.observation.sample_rows if r["contact_id"] == ids[12]} == {
        "smb"
    }
