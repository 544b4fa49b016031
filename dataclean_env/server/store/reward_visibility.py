"""Blind episodes (`reward_mode="hidden"`): the one rule for what a door may show of them.

The score of every step is an oracle: an agent could probe gold with `set_cell` and watch
the reward move. So while a blind episode runs, it hides, at every door (REST reset, step
and state; /ws step and state; /mcp's tools; the page's helpers):

* `HIDDEN_FIELDS` of any answer (a step result, an observation, a state): the reward, the
  score and its components, and a real table's repair figures;
* `SCORE_INFO` inside the answer's `info`: the full-precision score, whether gold is
  reached, the repair figures;
* the table beyond what the agent's own steps showed: the viewer refuses (`refuse_view`),
  so every page of rows costs a `show_rows` step.

`blind_view` applies the first two to any answer, `refuse_view` the third; the doors call
nothing else. The final answer (done) shows everything, unless the episode is `sealed`: a
leaderboard run's episodes stay sealed until the whole run ends, so no score of a run (nor
an audit's per-phase scores such as `validate_score`, which tell one rollout of an instance
what the next should claim) is shown before the run is over. The engine itself is
unchanged: it still grades every step, the doors just do not say.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from dataclean_env.errors import ViewRefused

RewardMode = Literal["delta", "absolute", "hidden"]
REWARD_MODES: tuple[str, ...] = ("delta", "absolute", "hidden")
HIDDEN_NOTE = "reward hidden until the episode ends (reward_mode='hidden')"
SEALED_NOTE = "scores hidden until the leaderboard run ends: read them on its run record"
HIDDEN_FIELDS = ("reward", "score", "score_components", "repair")
SCORE_INFO = ("score", "exact", "repair")

Answer = TypeVar("Answer", bound=BaseModel)


def hides(episode: Any, done: bool) -> bool:
    """True while this episode's score must not be shown: a blind episode before its end,
    or after it while it is sealed (its leaderboard run has not ended)."""
    return bool(getattr(episode, "blind", False)) and (
        not done or bool(getattr(episode, "sealed", False))
    )


def blind_info(info: dict[str, Any], note: str) -> dict[str, Any]:
    """`info` without anything that tells the score, marked as hidden."""
    kept = {k: v for k, v in info.items() if k not in SCORE_INFO}
    return {**kept, "reward_hidden": True, "reward_note": note}


def blind_view(episode: Any, answer: Answer) -> Answer:
    """The answer a door may send: while the blind episode runs, every hidden field None
    and the score figures out of `info`; otherwise the answer itself."""
    done = bool(getattr(answer, "done", False))
    if not hides(episode, done):
        return answer
    fields = dict(answer)
    update: dict[str, Any] = {name: None for name in HIDDEN_FIELDS if name in fields}
    if "info" in fields:
        update["info"] = blind_info(fields["info"] or {}, SEALED_NOTE if done else HIDDEN_NOTE)
    # Built afresh, not model_copy: a copy would keep a StepResult's JSON the engine already
    # wrote (json_bytes), score and all.
    return type(answer).model_construct(**{**fields, **update})


def refuse_view(episode: Any) -> None:
    """The table viewer is closed to a running blind episode: its rows cost show_rows."""
    if hides(episode, bool(episode.done)):
        raise ViewRefused(
            "the page's helpers are closed for blind episodes until they end; use show_rows"
        )
