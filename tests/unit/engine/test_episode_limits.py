"""Limits on what one episode keeps: its parameters' history, and the form of its id."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import pandas as pd
import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.engine.episode_ids import check_episode_id
from dataclean_env.errors import InvalidAction, InvalidParameters, TooLarge
from dataclean_env.schemas import Action
from dataclean_env.table.limits import EngineLimits, TableBudget
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.tasks import TaskRegistry


def test_the_history_of_parameters_is_bounded(registry: TaskRegistry) -> None:
    """Steps that change nothing but carry large parameters used to grow an episode's
    memory by their size at every step (a live server: ~18 MB an episode)."""
    limits = EngineLimits(max_action_bytes=10_000, max_history_bytes=25_000)
    episode = Episode("big", registry.make("rayyan", None), limits)
    column = episode.snapshot.columns[1]
    mapping = {f"nothing-{i:04d}": "x" for i in range(450)}  # ~9,500 bytes, matches nothing
    action = Action(operation="map", parameters={"column": column, "mapping": mapping})
    episode.step(action)
    episode.step(action)
    before = episode.state().model_dump_json()
    with pytest.raises(
        TooLarge, match="history would hold 28470 bytes of parameters; at most 25000"
    ):
        episode.step(action)
    assert episode.state().model_dump_json() == before  # refused: nothing changed
    episode.step(Action(operation="show_rows", parameters={"offset": 0, "limit": 5}))


def set_total(value: Any) -> dict[str, Any]:
    return {"row_id": 256081, "column": "total", "value": value}  # orders' first row, a float


@pytest.mark.parametrize(
    ("task_id", "operation", "parameters"),
    [
        (
            "medium_missing_dtype",
            "fill_missing",
            {"strategy": "constant", "column": "age", "value": 10**999},
        ),
        ("orders", "set_cell", set_total(10**999)),
        ("orders", "set_cell", set_total(-(10**309))),
        (
            "orders",
            "program",
            {"operations": [{"operation": "set_cell", "parameters": set_total(10**400)}]},
        ),
    ],
    ids=["fill_missing", "set_cell", "set_cell-negative", "program"],
)
def test_an_integer_past_a_float_in_the_parameters_is_refused(
    registry: TaskRegistry,
    caplog: pytest.LogCaptureFixture,
    task_id: str,
    operation: str,
    parameters: dict[str, Any],
) -> None:
    """It reached pandas and raised OverflowError: a 422 OPERATION_FAILED with Python's text,
    and a traceback in the server's log at every such step."""
    episode = Episode("huge", registry.make(task_id, 0))
    before = episode.state().model_dump_json()
    with pytest.raises(InvalidParameters) as refused:
        episode.step(Action(operation=operation, parameters=parameters))
    assert (refused.value.status, refused.value.code) == (422, "INVALID_PARAMETERS")
    assert "too large" in refused.value.detail
    assert episode.state().model_dump_json() == before
    assert episode.refusals == 1  # counted as any invalid parameters are
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_an_integer_a_float_holds_is_taken(registry: TaskRegistry) -> None:
    episode = Episode("big", registry.make("orders", 0))
    episode.step(Action(operation="set_cell", parameters=set_total(10**300)))
    assert episode.step_count == 1


@pytest.mark.parametrize("episode_id", ["a\n", "a\r\n", "\na", "a b", ""])
def test_an_episode_id_is_refused_unless_all_of_it_is_well_formed(episode_id: str) -> None:
    with pytest.raises(InvalidAction):
        check_episode_id(episode_id)


def test_a_well_formed_episode_id_is_taken() -> None:
    assert check_episode_id("run-1.a_b:c") == "run-1.a_b:c"


def test_a_table_beyond_the_text_limit_gets_room_to_be_repaired() -> None:
    """A table that starts with more text than the limit may grow by half of it and keep
    64 bytes of parameters per cell in its history; one within it keeps the limits."""
    frame = pd.DataFrame({"id": [1, 2, 3, 4], "name": ["abcde"] * 4})
    limits = EngineLimits(max_table_chars=19, max_history_bytes=100)
    large = TableBudget(limits, Snapshot.of(frame))
    assert (large.total, large.max_table, large.max_history) == (20, 30, 512)
    within = TableBudget(replace(limits, max_table_chars=20), Snapshot.of(frame))
    assert (within.max_table, within.max_history) == (20, 100)
