"""A step's JSON is written once, by the engine, and is exactly what pydantic writes."""

from __future__ import annotations

from dataclean_env.engine.episode import Episode
from dataclean_env.schemas import Action
from dataclean_env.server.reward_visibility import blind_view
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
