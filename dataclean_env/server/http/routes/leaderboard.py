"""The leaderboard's routes: verified runs on the secret split, and self-reported scores.

GET  /leaderboard              CleanifyAI's board of self-reported scores, the verified
                               board of one suite version beside it (`?suite=lite`,
                               `?suite_version=`, `?grader_version=` pick another board)
POST /leaderboard/submit       a self-reported score (CleanifyAI's form), validated
POST /leaderboard/runs         start a run of a suite (`Authorization: Bearer <token>`
                               puts it under the token's name and model): its blind
                               episodes' ids
GET  /leaderboard/runs/{id}    a run's record: status, versions, what the agent declared,
                               its ended episodes' scores and their summary
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dataclean_env.errors import InvalidSubmission, TokenRequired
from dataclean_env.leaderboard import tokens
from dataclean_env.leaderboard.names import MODEL_LENGTH, NAME_LENGTH, board_name
from dataclean_env.leaderboard.service import MAX_ROLLOUTS, Leaderboard
from dataclean_env.leaderboard.tokens import Submitter
from dataclean_env.rate_limit import client_key
from dataclean_env.schemas import EXAMPLE_TASK_ID
from dataclean_env.server.http.deps import get_registry, get_settings
from dataclean_env.server.http.openapi_doc import request_body
from dataclean_env.server.http.requests import read_json
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry

router = APIRouter(tags=["leaderboard"])

NAME_RULE = (
    "NFKC-normalised and trimmed; Unicode's identifier security rules (UTS #39): no "
    "invisible characters, no mixed scripts, no look-alike of a holder's name (INVALID_NAME)"
)


class SubmitRequest(BaseModel):
    """CleanifyAI's form. Stored as self-reported: never ranked with verified runs."""

    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={
            "examples": [
                {"model_name": "my-agent", "task_id": EXAMPLE_TASK_ID, "score": 0.85, "steps": 4}
            ]
        },
    )

    model_name: str = Field(description=f"At most {NAME_LENGTH} characters, {NAME_RULE}.")
    task_id: str = Field(min_length=1, max_length=64)
    score: float = Field(gt=0.0, lt=1.0, allow_inf_nan=False)
    steps: int = Field(default=0, ge=0, le=100_000)

    @field_validator("steps", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        # Lax parsing reads true and false as 1 and 0; a step count is a number.
        if isinstance(value, bool):
            raise ValueError("steps must be an integer, not a boolean")
        return value


class Declared(BaseModel):
    """What the agent says of itself, shown on its run record (never checked)."""

    model_config = ConfigDict(extra="forbid")

    prompt: str | None = Field(default=None, max_length=8000, description="Its system prompt.")
    policy: str | None = Field(default=None, max_length=200, description="Or its policy.")
    temperature: float | None = Field(default=None, ge=0.0, le=10.0, allow_inf_nan=False)
    step_budget: int | None = Field(default=None, ge=1, le=10_000, description="Its own.")


class RunRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"name": "my-team", "model": "my-agent", "suite": "lite"}]},
    )

    name: str | None = Field(
        default=None,
        description=f"Who runs it, without a token: at most {NAME_LENGTH} characters, "
        f"{NAME_RULE}. With a token the run goes under the token's name.",
    )
    model: str | None = Field(
        default=None,
        description=f"The agent: at most {MODEL_LENGTH} characters, {NAME_RULE}. Required "
        "without a token; with one it may be left out, and if given must be the model the "
        "token is bound to (422 TOKEN_MODEL_MISMATCH).",
    )
    suite: str | None = Field(
        default=None, max_length=64, description="`full` (the default) or `lite`, or a version."
    )
    families: list[str] | None = Field(
        default=None, max_length=16, description="A practice run (never ranked) of these."
    )
    episodes: int | None = Field(default=None, ge=1, description="A practice run's size.")
    rollouts: int = Field(
        default=1, ge=1, le=MAX_ROLLOUTS, description="Plays of each drawn instance (episodes)."
    )
    agent: Declared | None = None


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


@router.get("/leaderboard")
async def leaderboard(
    board: Board,
    suite: Annotated[str | None, Query(max_length=64)] = None,
    suite_version: Annotated[str | None, Query(max_length=96)] = None,
    grader_version: Annotated[str | None, Query(max_length=32)] = None,
) -> dict[str, Any]:
    """Self-reported scores in CleanifyAI's shape (`leaderboard`, `total_submissions`) and
    the verified board of one suite version (`verified`), never mixed."""
    return await run_in_threadpool(board.boards, suite, suite_version, grader_version)


@router.post("/leaderboard/submit", openapi_extra=request_body(SubmitRequest, required=True))
async def submit(request: Request, board: Board, registry: Registry) -> Any:
    """Store a self-reported score (known task, 0 < score < 1, steps >= 0)."""
    form = _parse(SubmitRequest, await read_json(request))
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


@router.post("/leaderboard/runs", openapi_extra=request_body(RunRequest, required=True))
async def start_run(request: Request, board: Board, settings: Config) -> Any:
    """Start a run on fresh secret-split instances of a suite. Play each episode by its id:
    over REST (`POST /reset` with `episode_id` joins it, then `/step` with it), or over /ws
    (a reset frame with `episode_id`). Episodes are blind; the server scores them itself."""
    form = _parse(RunRequest, await read_json(request))
    model = None if form.model is None else board_name(form.model, "model", MODEL_LENGTH)
    submitter = await run_in_threadpool(_submitter, request, board, settings, model)
    if submitter is not None:  # one token, one row: its name and model
        name, model = submitter.name, submitter.model
    elif form.name is None:
        raise InvalidSubmission("name: required without a submitter token")
    elif model is None:
        raise InvalidSubmission("model: required without a submitter token")
    else:
        name = board_name(form.name, "name", NAME_LENGTH)
        await run_in_threadpool(_not_a_look_alike, board, name)
    declared = form.agent.model_dump(exclude_none=True) if form.agent else {}
    return await run_in_threadpool(
        partial(
            board.create_run,
            name,
            model,
            client_key(request.scope),
            suite=form.suite,
            families=form.families,
            episodes=form.episodes,
            submitter=submitter,
            declared=declared,
            rollouts=form.rollouts,
        )
    )


def _not_a_look_alike(board: Leaderboard, name: str) -> None:
    with board.open().connect() as connection:
        tokens.refuse_look_alike(connection, name)


def _submitter(
    request: Request, board: Leaderboard, settings: Settings, model: str | None
) -> Submitter | None:
    """The token's holder (playing `model`, if named); None: an anonymous run (refused
    when tokens are required)."""
    given = request.headers.get("authorization")
    if given is None:
        if settings.leaderboard_require_token:
            raise TokenRequired(
                "this server ranks only runs under a submitter token: send "
                "Authorization: Bearer <token> (ask its administrator for one)"
            )
        return None
    return tokens.submitter(board.open(), tokens.bearer(given), model)


@router.get("/leaderboard/runs/{run_id}")
async def run_status(run_id: str, board: Board) -> Any:
    """A run's record: status (open, complete, timed_out, aborted), suite, grader, generator
    and server versions, what the agent declared, each ended episode's raw and normalised
    score, and the summary per family (with the rates of refused actions, rows lost,
    correct cells changed and exact matches) and per difficulty."""
    return await run_in_threadpool(board.run, run_id)
