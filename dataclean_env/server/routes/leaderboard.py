"""The leaderboard's routes: verified runs on the secret split, and self-reported scores.

GET  /leaderboard              CleanifyAI's board of self-reported scores, the verified
                               board beside it (`?grader_version=` picks another board)
POST /leaderboard/submit       a self-reported score (CleanifyAI's form), validated
POST /leaderboard/runs         start a run: its id and its blind episodes' ids
GET  /leaderboard/runs/{id}    a run's status and its ended episodes' scores
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dataclean_env.errors import InvalidSubmission
from dataclean_env.leaderboard.names import board_name
from dataclean_env.leaderboard.service import Leaderboard
from dataclean_env.server.deps import get_registry, get_settings
from dataclean_env.server.rate_limit import client_key
from dataclean_env.server.requests import read_json
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry

router = APIRouter(tags=["leaderboard"])

NAME_LENGTH = 64  # characters of a submitter's name, once normalised
MODEL_LENGTH = 128  # characters of a model's name, once normalised
NAME_RULE = "NFKC-normalised and trimmed; no control or format characters (INVALID_NAME)"


class SubmitRequest(BaseModel):
    """CleanifyAI's form. Stored as self-reported: never ranked with verified runs."""

    model_config = ConfigDict(extra="ignore")

    model_name: str = Field(description=f"At most {NAME_LENGTH} characters, {NAME_RULE}.")
    task_id: str = Field(min_length=1, max_length=64)
    score: float = Field(gt=0.0, lt=1.0, allow_inf_nan=False)
    steps: int = Field(default=0, ge=0, le=100_000)


class RunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description=f"Who runs it: at most {NAME_LENGTH} characters, {NAME_RULE}.")
    model: str = Field(description=f"The agent: at most {MODEL_LENGTH} characters, {NAME_RULE}.")
    families: list[str] | None = Field(default=None, max_length=16)
    episodes: int | None = Field(default=None, ge=1, description="Default: the server's.")


async def get_leaderboard(request: Request) -> Leaderboard:
    leaderboard: Leaderboard = request.app.state.leaderboard
    return leaderboard


Board = Annotated[Leaderboard, Depends(get_leaderboard)]
Registry = Annotated[TaskRegistry, Depends(get_registry)]
Config = Annotated[Settings, Depends(get_settings)]


def _parse(model: type[BaseModel], body: dict[str, Any]) -> Any:
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        parts = [
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        ]
        raise InvalidSubmission("; ".join(parts)) from None


def _body(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


@router.get("/leaderboard")
async def leaderboard(
    board: Board,
    grader_version: Annotated[str | None, Query(max_length=32)] = None,
) -> dict[str, Any]:
    """Self-reported scores in CleanifyAI's shape (`leaderboard`, `total_submissions`) and
    the verified board of one grader version (`verified`), never mixed."""
    return await run_in_threadpool(board.boards, grader_version)


@router.post("/leaderboard/submit", openapi_extra=_body(SubmitRequest))
async def submit(request: Request, board: Board, registry: Registry, settings: Config) -> Any:
    """Store a self-reported score (known task, 0 < score < 1, steps >= 0)."""
    form = _parse(SubmitRequest, await read_json(request, settings.max_body_bytes))
    registry.spec(form.task_id)  # 404 UNKNOWN_TASK
    entry = await run_in_threadpool(
        board.submit,
        board_name(form.model_name, "model_name", NAME_LENGTH),
        form.task_id,
        form.score,
        form.steps,
        client_key(request.scope),
    )
    return {"status": "submitted", "entry": entry}


@router.post("/leaderboard/runs", openapi_extra=_body(RunRequest))
async def start_run(request: Request, board: Board, settings: Config) -> Any:
    """Start a run on fresh secret-split instances. Play each episode by its id: over REST
    (`POST /reset` with `episode_id` joins it, then `/step` with it), or over /ws (a reset
    frame with `episode_id`). Episodes are blind; the server scores them itself."""
    form = _parse(RunRequest, await read_json(request, settings.max_body_bytes))
    return await run_in_threadpool(
        board.create_run,
        board_name(form.name, "name", NAME_LENGTH),
        board_name(form.model, "model", MODEL_LENGTH),
        form.families,
        form.episodes,
        client_key(request.scope),
    )


@router.get("/leaderboard/runs/{run_id}")
async def run_status(run_id: str, board: Board) -> Any:
    """A run's status (open, complete, aborted) and the scores of its ended episodes."""
    return await run_in_threadpool(board.run, run_id)
