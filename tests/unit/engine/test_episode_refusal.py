"""`Episode.refusal`: the refusal an action would get, asked without taking the step."""

from __future__ import annotations

import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import OperationFailed, OperationNotAllowed
from dataclean_env.schemas import Action
from dataclean_env.tasks import default_registry

pytestmark = pytest.mark.unit


def test_asking_changes_nothing_and_names_the_refusal_the_step_would_get() -> None:
    task = default_registry().make("fix_types", 0, "eval")
    asked, control = Episode("asked", task), Episode("control", task)
    before = asked.observation().model_dump_json()

    refused = asked.refusal(
        Action(operation="fix_dtype", parameters={"column": "unit_price", "dtype": "float"})
    )
    assert isinstance(refused, OperationFailed)
    assert "not numbers" in str(refused)
    not_offered = asked.refusal(Action(operation="rename_columns", parameters={"mapping": {}}))
    assert isinstance(not_offered, OperationNotAllowed)
    good = Action(
        operation="regex_replace",
        parameters={"column": "unit_price", "pattern": "[^0-9.]", "replacement": ""},
    )
    assert asked.refusal(good) is None

    assert asked.observation().model_dump_json() == before
    assert (asked.step_count, asked.refusals, asked.history) == (0, 0, [])
    # Asking first changes no byte of the step taken after it.
    assert asked.step(good).json_bytes() == control.step(good).json_bytes().replace(
        b'"control"', b'"asked"'
    )
