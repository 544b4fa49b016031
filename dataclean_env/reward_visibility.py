"""Blind episodes (`reward_mode="hidden"`): what a door may show of an episode's score.

The score of every step is an oracle: an agent could probe gold with `set_cell` and watch
the reward move. In a blind episode the doors (REST, /ws) pass each answer through these
functions, which leave out the reward, the score and its components until the episode has
ended; the final answer shows them. The engine itself is unchanged: it still grades every
step, the doors just do not say.
"""

from __future__ import annotations

from typing import Any, Literal

from dataclean_env.schemas import EpisodeState, StepResult

RewardMode = Literal["delta", "absolute", "hidden"]
REWARD_MODES: tuple[str, ...] = ("delta", "absolute", "hidden")
HIDDEN_NOTE = "reward hidden until the episode ends (reward_mode='hidden')"
# Step info that would tell the score: the full-precision score, whether gold is reached,
# and a real table's repair figures.
SCORE_INFO = ("score", "exact", "repair")


def blind_info(info: dict[str, Any]) -> dict[str, Any]:
    """`info` without anything that tells the score, marked as hidden."""
    kept = {k: v for k, v in info.items() if k not in SCORE_INFO}
    return {**kept, "reward_hidden": True, "reward_note": HIDDEN_NOTE}


def hides(episode: Any, done: bool) -> bool:
    """True while this episode's score must not be shown."""
    return bool(getattr(episode, "blind", False)) and not done


def visible_result(episode: Any, result: StepResult) -> StepResult:
    """The StepResult a client may see: without reward while the blind episode runs."""
    if not hides(episode, result.done):
        return result
    return StepResult.model_construct(
        observation=result.observation, reward=None, done=result.done, info=blind_info(result.info)
    )


def visible_state(episode: Any, state: EpisodeState) -> EpisodeState:
    """The state a client may see: without reward while the blind episode runs."""
    if not hides(episode, state.done):
        return state
    return state.model_copy(update={"reward": None, "repair": None})
