"""OpenEnv's Action and Observation are the REST ones: their fields are declared once
(`schemas.ActionFields`, `schemas.ObservationFields`) and OpenEnv's models add only
OpenEnv's fields and the score."""

from __future__ import annotations

import pytest
from pydantic import Field, ValidationError

from dataclean_env.models import CleaningAction, CleaningObservation, _with_empty_default
from dataclean_env.schemas import Action, ActionFields, Observation, ObservationFields

OPENENV_OBSERVATION = ["done", "reward", "metadata"]
SCORE_FIELDS = ["score", "score_components", "info"]


def test_the_action_fields_are_declared_once() -> None:
    assert list(Action.model_fields) == list(ActionFields.model_fields)
    assert list(CleaningAction.model_fields) == ["metadata", *ActionFields.model_fields]
    too_long = "x" * 65  # MAX_OPERATION_NAME + 1: the same bound at both doors
    with pytest.raises(ValidationError):
        Action(operation=too_long)
    with pytest.raises(ValidationError):
        CleaningAction(operation=too_long)


def test_the_observation_fields_are_declared_once_and_keep_their_words() -> None:
    shared = list(ObservationFields.model_fields)
    assert list(Observation.model_fields) == shared
    assert list(CleaningObservation.model_fields) == [
        *OPENENV_OBSERVATION,
        *shared,
        *SCORE_FIELDS,
    ]
    for name in shared:
        assert (
            CleaningObservation.model_fields[name].description
            == Observation.model_fields[name].description
        ), name


def test_openenv_observation_gives_each_required_field_its_empty_value() -> None:
    assert CleaningObservation().model_dump(exclude=set(OPENENV_OBSERVATION + SCORE_FIELDS)) == {
        "episode_id": "",
        "task_id": "",
        "step": 0,
        "steps_remaining": 0,
        "dataset_info": None,
        "columns": [],
        "shape": [],
        "missing_values": {},
        "dtypes": {},
        "duplicate_count": 0,
        "sample_rows": [],
        "sample_offset": 0,
        "available_operations": [],
        "task_description": "",
        "message": "",
        "phase": None,
        "phases_left": None,
        "column_profiles": {},
        "query_result": None,
    }
    # The REST observation still requires them.
    with pytest.raises(ValidationError) as missing:
        Observation()
    assert len(missing.value.errors()) == 13


def test_a_field_without_an_empty_value_is_refused_not_guessed() -> None:
    with pytest.raises(TypeError, match="no empty value"):
        _with_empty_default(Field(description="a ratio"))
