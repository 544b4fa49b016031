"""The environment checker (in the spirit of Gymnasium's `check_env`): the API's invariants,
stated once, run on real episodes of any task. `/validate` and the tests both call it.

Invariants checked on a task:

* reset: step 0, not done, the full step budget left, every reward field in the clamp range;
* determinism: two resets with the same task, seed and split give the same observation
  (episode id aside), and the same action gives the same result;
* a refused action (an unknown operation) changes nothing but the refusal count, and its
  error reaches `info` and the message;
* an accepted step advances the step count by one; `state` agrees with it;
* a step after the end is refused with EPISODE_FINISHED;
* everything a door sends is JSON-serialisable.
"""

from __future__ import annotations

import json
from typing import Any

from dataclean_env.engine.doors import attempt, start_episode
from dataclean_env.engine.episode import Episode
from dataclean_env.grading.reward import CEILING, FLOOR
from dataclean_env.schemas import Action, StepResult, graded
from dataclean_env.tasks import TaskRegistry

TABLE_FIELDS = ("columns", "shape", "missing_values", "dtypes", "duplicate_count", "sample_rows")


def _probe(episode: Episode) -> Action:
    """An action every task accepts that does not end the episode when it can avoid it."""
    for name in ("validate_schema", "show_rows", "finish"):
        if name in episode.spec.operations:
            return Action(operation=name)
    raise AssertionError(f"task {episode.spec.task_id!r} offers no probe operation")


def _comparable(result: StepResult) -> str:
    data = result.model_dump(mode="json")
    data["observation"].pop("episode_id")
    data["info"].pop("episode_id")
    return json.dumps(data, sort_keys=True)


def _in_range(result: StepResult) -> bool:
    return all(FLOOR <= value <= CEILING for value in graded(result).model_dump().values())


def check_task(
    registry: TaskRegistry, task_id: str, seed: int = 0, split: str = "train"
) -> dict[str, Any]:
    """Run every invariant on scratch episodes of the task; `status` is passed or failed."""
    checks: dict[str, bool] = {}
    try:
        episode = start_episode(registry, task_id, seed, split, f"check-{task_id}")
        # The twin's task is made anew by its family, not handed over by the registry, so
        # a family that does not reproduce its instances (or its steps) fails below.
        twin = Episode(f"check-{task_id}-twin", registry.make(task_id, seed, split, shared=False))
        first = episode.result()
        checks["reset_observation"] = (
            first.observation.step == 0
            and not first.done
            and first.observation.steps_remaining == episode.spec.max_steps
        )
        checks["reward_in_range"] = _in_range(first)
        checks["reset_deterministic"] = _comparable(first) == _comparable(twin.result())

        refused = attempt(episode, {"operation": "no_such_operation"})
        before = first.observation.model_dump()
        after_refusal = refused.observation.model_dump()
        checks["refusal_changes_nothing"] = (
            all(before[f] == after_refusal[f] for f in TABLE_FIELDS)
            and refused.observation.step == 0
            and refused.info.get("error", {}).get("code") == "UNKNOWN_OPERATION"
        )
        attempt(twin, {"operation": "no_such_operation"})  # keep the twin in step

        probe = _probe(episode)
        stepped = attempt(episode, probe)
        checks["step_advances"] = stepped.observation.step == 1 and "error" not in stepped.info
        checks["step_deterministic"] = _comparable(stepped) == _comparable(attempt(twin, probe))
        checks["reward_in_range"] &= _in_range(stepped)
        state = episode.state()
        checks["state_matches"] = (
            state.step_count == 1 and state.task_id == task_id and state.done == stepped.done
        )

        finished = attempt(episode, {"operation": "finish"})
        late = attempt(episode, probe)
        checks["step_after_end_refused"] = (
            finished.done and late.info.get("error", {}).get("code") == "EPISODE_FINISHED"
        )
        json.dumps(
            [r.model_dump(mode="json") for r in (first, refused, stepped, finished, late)]
            + [state.model_dump(mode="json")]
        )
        checks["serialisable"] = True
        return {
            "status": "passed" if all(checks.values()) else "failed",
            "checks": checks,
            "reset_reward": graded(first).total,
            "step_reward": graded(stepped).total,
        }
    except Exception as exc:  # a task that cannot even run is what the checker is for
        return {"status": "failed", "checks": checks, "error": f"{type(exc).__name__}: {exc}"}


def check_registry(registry: TaskRegistry) -> dict[str, Any]:
    """`check_task` on every task: `{"openenv_valid": bool, "tasks": {id: report}}`."""
    results = {task_id: check_task(registry, task_id) for task_id in registry.task_ids()}
    valid = all(r["status"] == "passed" for r in results.values())
    return {"openenv_valid": valid, "tasks": results}
