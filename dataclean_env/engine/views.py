"""What the doors show of an episode as last committed: its observation, the step
result's info, the whole result, and its state (`/state`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dataclean_env.errors import EnvError
from dataclean_env.operations.claims import phase_view
from dataclean_env.schemas import EpisodeState, HistoryEntry, Observation, StepResult, built

if TYPE_CHECKING:
    from dataclean_env.engine.episode import Episode


def observation(episode: Episode, message: str | None = None) -> Observation:
    """The observation after the last step; with `message` (a refusal's), that of a
    step that ran no query."""
    committed = episode.committed
    return built(
        Observation,
        {
            "episode_id": episode.episode_id,
            "task_id": episode.spec.task_id,
            "step": episode.step_count,
            "steps_remaining": episode.spec.max_steps - episode.step_count,
            "available_operations": episode.operations,
            "task_description": episode.spec.description,
            "message": committed.last_message if message is None else message,
            **_phase(episode),
            "column_profiles": committed.profiles,
            "query_result": committed.query_result if message is None else None,
            **committed.summary,
        },
    )


def _phase(episode: Episode) -> dict[str, Any]:
    if not episode.spec.phases:
        return {}
    phase, left = phase_view(episode.spec.phases, [r.operation for r in episode.history])
    return {"phase": phase, "phases_left": left}


def info(episode: Episode, error: EnvError | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {
        "episode_id": episode.episode_id,
        "task_id": episode.spec.task_id,
        "step": episode.step_count,
        "max_steps": episode.spec.max_steps,
        "score": episode.score,
        "exact": episode.exact,
        "terminated": episode.end_reason == "finished",
        "truncated": episode.end_reason in ("step_budget", "refusal_budget"),
        "end_reason": episode.end_reason,
        "refusals": episode.refusals,
        "last_action": (
            {
                "operation": episode.history[-1].operation,
                "parameters": episode.history[-1].parameters,
            }
            if episode.history
            else None
        ),
    }
    report = repair(episode)
    if report is not None:
        info["repair"] = report
    if episode.spec.label_budget:
        info["labels_used"] = len(episode.labelled)
    if error is not None:
        info["error"] = {"code": error.code, "detail": error.detail, **error.fields}
    return info


def repair(episode: Episode) -> dict[str, float] | None:
    """Real tables: the exact cell-repair precision, recall, F1 and cells changed."""
    return episode.task.grader.repair_report(episode.committed.scores)


def result(episode: Episode, error: EnvError | None = None) -> StepResult:
    message = f"Error ({error.code}): {error.detail}" if error else None
    return built(
        StepResult,
        {
            "observation": observation(episode, message),
            "reward": episode.reward,
            "done": episode.done,
            "info": info(episode, error),
        },
    )


def state(episode: Episode) -> EpisodeState:
    return EpisodeState(
        episode_id=episode.episode_id,
        task_id=episode.spec.task_id,
        seed=episode.task.seed,
        split=episode.task.split,
        step_count=episode.step_count,
        max_steps=episode.spec.max_steps,
        steps_remaining=episode.spec.max_steps - episode.step_count,
        done=episode.done,
        shape=[episode.snapshot.n_rows, len(episode.snapshot.columns)],
        reward=episode.reward,
        history=[
            HistoryEntry(step=i + 1, operation=r.operation, parameters=r.parameters, message=m)
            for i, (r, m) in enumerate(zip(episode.history, episode.messages, strict=True))
        ],
        repair=repair(episode),
    )
