"""A step's JSON is written once, by the engine, and is exactly what pydantic writes."""

from __future__ import annotations

from dataclean_env.engine.episode import Episode
from dataclean_env.schemas import Action
from dataclean_env.server.store.reward_visibility import blind_view
from dataclean_env.tasks import default_registry


def _episode() -> Episode:
    return Episode("wire-json", default_registry().make("easy_dedup_rename", 0))


def test_a_committed_step_carries_its_json_and_sends_those_bytes():
    episode = _episode()
    result = episode.step(Action(operation="remove_duplicates"))
    written = result.json_bytes()
    assert written == result.model_dump_json().encode()
    assert result.json_bytes() is written  # kept, not written again
    assert b'"episode_id":"wire-json"' in written


def test_a_fresh_result_writes_its_json_when_asked():
    episode = _episode()
    result = episode.result()
    assert result.json_bytes() == result.model_dump_json().encode()


def test_a_blind_episode_sends_its_own_view_not_the_engine_json():
    episode = _episode()
    episode.blind = True
    result = episode.step(Action(operation="remove_duplicates"))
    shown = blind_view(episode, result)
    assert shown is not result
    assert b'"reward":null' in shown.json_bytes()
    assert b'"reward":null' not in result.json_bytes()
    assert shown.json_bytes() == shown.model_dump_json().encode()


def test_built_is_model_construct() -> None:
    """`schemas.built` makes the very object `model_construct` makes (fields, defaults, the
    fields set, private attributes) for the models the engine builds on every step."""
    from dataclean_env.engine.doors import start_episode
    from dataclean_env.schemas import Observation, Reward, StepResult, built
    from dataclean_env.tasks import default_registry

    episode = start_episode(default_registry(), "hard_full_pipeline", episode_id="built")
    result = episode.step(Action(operation="remove_duplicates"))
    observation = result.observation
    values = {name: getattr(observation, name) for name in observation.model_fields_set}
    partial = {k: v for k, v in values.items() if k not in ("phase", "phases_left", "query_result")}
    reward = {k: v for k, v in result.reward.model_dump().items()} if result.reward else {}
    cases = [
        (Observation, {**partial, "not_a_field": 1}, None),
        (Reward, {**dict.fromkeys(Reward.model_fields), **reward}, set(reward)),
        (StepResult, {"observation": observation, "reward": result.reward, "done": False}, None),
    ]
    for cls, given, fields_set in cases:
        ours, theirs = built(cls, dict(given), fields_set), cls.model_construct(fields_set, **given)
        assert ours.__dict__ == theirs.__dict__
        assert list(ours.__dict__) == list(theirs.__dict__)
        assert ours.model_fields_set == theirs.model_fields_set
        assert ours.__pydantic_private__ == theirs.__pydantic_private__
        assert ours.__pydantic_extra__ == theirs.__pydantic_extra__
        assert ours.model_dump_json() == theirs.model_dump_json()
