"""Service metadata, health, the task list, and the self-check /validate."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse

from dataclean_env import ENV_NAME, __version__
from dataclean_env.episode import Episode
from dataclean_env.grading.reward import CEILING, FLOOR
from dataclean_env.schemas import Action, TaskList
from dataclean_env.server.deps import get_registry
from dataclean_env.tasks import TaskRegistry

router = APIRouter(tags=["service"])
Registry = Annotated[TaskRegistry, Depends(get_registry)]


@router.get("/", response_model=None)
async def root(request: Request, registry: Registry) -> dict[str, Any] | RedirectResponse:
    """Service metadata: name, version, status, task ids and the endpoint list. A browser
    (asking for HTML) is sent to the web page instead."""
    if "text/html" in request.headers.get("accept", ""):
        return RedirectResponse("/web", status_code=307)
    paths = request.app.openapi()["paths"]
    endpoints = [f"{method.upper()} {path}" for path, ops in paths.items() for method in ops]
    endpoints += [f"GET {request.app.docs_url}", "WS /ws"]  # neither is in the OpenAPI paths
    return {
        "name": ENV_NAME,
        "version": __version__,
        "status": "running",
        "tasks": registry.task_ids(),
        "endpoints": endpoints,
    }


@router.get("/health")
async def health(registry: Registry) -> dict[str, Any]:
    return {"status": "healthy", "tasks_loaded": len(registry.task_ids())}


@router.get("/tasks", response_model=TaskList)
async def tasks(registry: Registry) -> dict[str, Any]:
    """Every task (id, difficulty, description, step budget, operations, scoring weights) and
    every family with its task ids and how a reset instantiates them."""
    return {"tasks": [spec.public() for spec in registry.specs()], "families": registry.families()}


def validate_task(registry: TaskRegistry, task_id: str) -> dict[str, Any]:
    """A real reset, step and state on a scratch episode of the task, with their checks."""
    checks: dict[str, bool] = {}
    try:
        episode = Episode(f"validate-{task_id}", registry.make(task_id, seed=0))
        first = episode.result()
        checks["reset_observation"] = first.observation.step == 0 and not first.done
        probe = "validate_schema" if "validate_schema" in episode.spec.operations else "finish"
        after = episode.step(Action(operation=probe))
        checks["step_advances"] = after.observation.step == 1
        state = episode.state()
        checks["state_matches"] = state.step_count == 1 and state.task_id == task_id
        checks["reward_in_range"] = all(
            FLOOR <= value <= CEILING for value in after.reward.model_dump().values()
        )
        json.dumps(
            [
                first.model_dump(mode="json"),
                after.model_dump(mode="json"),
                state.model_dump(mode="json"),
            ]
        )
        checks["serialisable"] = True
        passed = all(checks.values())
        return {
            "status": "passed" if passed else "failed",
            "checks": checks,
            "reset_reward": first.reward.total,
            "step_reward": after.reward.total,
        }
    except Exception as exc:  # a task that cannot even run is what /validate is for
        return {"status": "failed", "checks": checks, "error": f"{type(exc).__name__}: {exc}"}


@router.get("/validate")
async def validate(registry: Registry) -> dict[str, Any]:
    """Run a real reset/step/state on every task and report whether each behaves."""

    def work() -> dict[str, Any]:
        results = {task_id: validate_task(registry, task_id) for task_id in registry.task_ids()}
        valid = all(r["status"] == "passed" for r in results.values())
        return {"openenv_valid": valid, "tasks": results}

    return await run_in_threadpool(work)
