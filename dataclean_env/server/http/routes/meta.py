"""Service metadata, health, the task list, and the self-check /validate."""

from __future__ import annotations

import asyncio
import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, RedirectResponse
from pydantic import AfterValidator

from dataclean_env import ENV_NAME, __version__
from dataclean_env.engine.checker import check_registry
from dataclean_env.errors import UnknownTask
from dataclean_env.schemas import SEED_BOUND, TaskList
from dataclean_env.server.http.deps import get_registry
from dataclean_env.tasks import TaskRegistry
from dataclean_env.training.rows import MAX_ROWS, rows

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
    endpoints += ["GET /docs", "GET /redoc", "WS /ws"]  # none is in the OpenAPI paths
    return {
        "name": ENV_NAME,
        "version": __version__,
        "status": "running",
        "tasks": registry.task_ids(),
        "endpoints": endpoints,
    }


@router.get("/health", response_model=None)
async def health(request: Request, registry: Registry) -> dict[str, Any] | JSONResponse:
    """Healthy, or 503 naming the part that failed (OpenEnv's mount, while it is failed)."""
    failure = request.app.state.openenv.failure
    if failure is None:
        return {"status": "healthy", "tasks_loaded": len(registry.task_ids())}
    body = {
        "status": "unhealthy",
        "tasks_loaded": len(registry.task_ids()),
        "failed": {"openenv": failure},
    }
    return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})


@router.get("/tasks", response_model=TaskList)
async def tasks(registry: Registry) -> dict[str, Any]:
    """Every task (id, difficulty, description, step budget, operations, scoring weights) and
    every family with its task ids and how a reset instantiates them."""
    return {"tasks": [spec.public() for spec in registry.specs()], "families": registry.families()}


# Numbers and ranges of ASCII digits, up to a 64-bit seed's length: '0-9,12'.
SEED_LIST = r"^[0-9]{1,19}(-[0-9]{1,19})?(,[0-9]{1,19}(-[0-9]{1,19})?)*$"


def _seeds_resets_take(seeds: str) -> str:
    # 19 digits reach past what /reset takes: no row may carry a seed it refuses.
    if any(int(number) >= SEED_BOUND for number in re.findall("[0-9]+", seeds)):
        raise ValueError("seeds must be below 2**63 (what /reset takes)")
    return seeds


@router.get("/tasks/rows")
async def task_rows(
    registry: Registry,
    families: str = "generated",
    split: Literal["train", "eval", "test"] = "train",
    seeds: Annotated[
        str, Query(pattern=SEED_LIST, max_length=2000), AfterValidator(_seeds_resets_take)
    ] = "0",
    n: Annotated[int | None, Query(ge=1, le=MAX_ROWS)] = None,
) -> dict[str, Any]:
    """The training rows (`dataclean_env.training.rows`): one reset's arguments (task_id,
    seed, split) per task and seed, seed-major. families: comma-separated kinds (fixed,
    generated, custom, showcase, claims, all), generated families or task ids (404
    UNKNOWN_TASK for another name); seeds: '0-9,12'; n: at most this many rows."""
    try:
        return {"rows": rows(families.split(","), split, seeds, n or MAX_ROWS, registry)}
    except ValueError as error:  # the seeds are checked by their pattern: a family's name
        raise UnknownTask(str(error)) from None


@router.get("/validate")
async def validate(request: Request, registry: Registry) -> dict[str, Any]:
    """Run the environment checker (`dataclean_env.engine.checker`) on every task: real resets,
    steps, a refusal and state, each invariant reported."""
    # One run at a time: calls that arrive while it runs share its report (a run takes the
    # CPU for a while, and sixty at once slowed /health to seconds). Shielded, so a caller
    # that leaves does not cancel the others' run.
    state = request.app.state
    running: asyncio.Future[dict[str, Any]] | None = getattr(state, "validation", None)
    if running is None or running.done():
        running = state.validation = asyncio.ensure_future(
            run_in_threadpool(check_registry, registry)
        )
    return await asyncio.shield(running)
