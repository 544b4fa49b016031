"""Stateful reset / step / state, per task path or by episode id (the contract's REST table).

An episode id may come in the body, the `episode_id` query parameter or the `X-Episode-Id`
header (in that order of precedence); without one, a call uses the task's default episode.
Steps on one episode are serialised by the episode's lock.

The `serve_*` functions do the work. The routes below are `LeanRoute`s: FastAPI matches
them, documents them (/docs, /openapi.json) and counts them in the metrics like any route,
but a matched request goes straight to its `serve_*` function, without FastAPI's dependency
injection and per-request wrapping (about 0.2-0.3 ms, more than reading the body and writing
the answer take): the handlers read the body, the ids and the app state themselves. The
decorated functions only declare the parameters, for the docs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import Response
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.datastructures import Headers, QueryParams
from starlette.types import Receive, Scope, Send

from dataclean_env.engine.doors import check_episode_id, parse_reset_options
from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError, TaskMismatch, UnknownTask
from dataclean_env.schemas import Action, EpisodeState, ResetRequest, StepResult
from dataclean_env.server.deps import get_settings, get_store
from dataclean_env.server.episode_store import EpisodeStore
from dataclean_env.server.http_errors import env_error_response
from dataclean_env.server.rate_limit import client_key
from dataclean_env.server.requests import StepRequest, parse_step, read_json
from dataclean_env.server.reward_visibility import blind_view
from dataclean_env.server.scheduling import is_slow, run_sized
from dataclean_env.settings import Settings

MAX_TASK_ID = 128

Store = Annotated[EpisodeStore, Depends(get_store)]
Config = Annotated[Settings, Depends(get_settings)]
EpisodeQuery = Annotated[str | None, Query(description="Episode to use (else the task's default).")]
EpisodeHeader = Annotated[str | None, Header(alias="X-Episode-Id")]


async def addressed_episode(
    episode_id: EpisodeQuery = None, x_episode_id: EpisodeHeader = None
) -> str | None:
    """The episode id of the query, else of the `X-Episode-Id` header (the body's wins over
    both, in the handlers)."""
    return _first(episode_id, x_episode_id)


EpisodeId = Annotated[str | None, Depends(addressed_episode)]


def _body_doc(model: type[BaseModel]) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": False,
            "content": {"application/json": {"schema": model.model_json_schema()}},
        }
    }


async def run_engine(work: Callable[[], BaseModel], cells: int, slow: bool = False) -> Response:
    # pydantic writes the JSON itself (in Rust): the same bytes as JSONResponse of
    # model_dump(mode="json"), in a quarter of the time. A step's result arrives with its
    # JSON already written by the engine (StepResult.json_bytes).
    result = await run_sized(work, cells, slow)
    body = result.json_bytes() if isinstance(result, StepResult) else result.model_dump_json()
    return Response(body, media_type="application/json")


def _first(*values: str | None) -> str | None:
    return next((v for v in values if v is not None), None)


def find_episode(store: EpisodeStore, task_id: str | None, episode_id: str | None) -> Episode:
    """The episode a call addresses: by id, else the default episode of the task. An id of
    another task's episode is answered like an absent one (404), revealing nothing."""
    if episode_id is not None:
        return store.get(episode_id, task_id)
    return store.default(task_id or store.registry.task_ids()[0])


def known_task(store: EpisodeStore, task_id: str) -> None:
    """404 for an unknown task; an absurdly long id is not echoed back."""
    if len(task_id) > MAX_TASK_ID:
        raise UnknownTask(f"unknown task (task ids are at most {MAX_TASK_ID} characters)")
    store.registry.spec(task_id)


async def serve_reset(
    request: Request,
    store: EpisodeStore,
    settings: Settings,
    task_id: str | None,
    episode_id: str | None,
) -> Response:
    """Reset (`task_id` of the path, else of the body, else the first task)."""
    body = parse_reset_options(await read_json(request, settings.max_body_bytes), "body")
    task = task_id or body.task_id or store.registry.task_ids()[0]
    known_task(store, task)
    if body.task_id is not None:
        known_task(store, body.task_id)
    if task_id is not None and body.task_id not in (None, task_id):
        raise TaskMismatch(f"path says task {task_id!r}, body says {body.task_id!r}")
    spec = store.registry.spec(task)  # 404 before any work
    name = _first(body.episode_id, episode_id)
    if name is not None:
        check_episode_id(name)
    store.place.check(name)  # 421 before the reset is counted
    client = client_key(request.scope)
    request.app.state.limiter.take(client, "resets")

    def work() -> StepResult:
        blind = body.reward_mode == "hidden"
        episode = store.reset(task, body.seed, name, body.split, blind=blind, client=client)
        return blind_view(episode, episode.result())

    return await run_engine(work, spec.cells)


async def serve_step(
    request: Request,
    store: EpisodeStore,
    settings: Settings,
    task_id: str | None,
    episode_id: str | None,
) -> Response:
    """One step of the episode the call names (else the task's default episode)."""
    call = parse_step(await read_json(request, settings.max_body_bytes))
    if call.task_id is not None:
        known_task(store, call.task_id)
    if task_id is not None and call.task_id not in (None, task_id):
        raise TaskMismatch(f"path says task {task_id!r}, body says {call.task_id!r}")
    wanted = task_id or call.task_id
    if wanted:
        known_task(store, wanted)

    episode = find_episode(store, wanted, _first(call.episode_id, episode_id))

    def work() -> StepResult:
        with episode.lock:
            return blind_view(episode, episode.step(call.action))

    return await run_engine(work, episode.cells, slow=is_slow(call.action.operation))


async def serve_state(store: EpisodeStore, task_id: str | None, episode_id: str | None) -> Response:
    """The state of the episode the call names (else the task's default episode)."""
    if task_id is not None:
        known_task(store, task_id)
    episode = find_episode(store, task_id, episode_id)

    def work() -> EpisodeState:
        with episode.lock:
            return blind_view(episode, episode.state())

    return await run_engine(work, episode.cells)


def _query(scope: Scope, name: str) -> str | None:
    return QueryParams(scope["query_string"]).get(name) if scope["query_string"] else None


def _episode_id(scope: Scope) -> str | None:
    """The episode id of the query, else of the `X-Episode-Id` header (as
    `addressed_episode` reads them for the docs)."""
    query, header = _query(scope, "episode_id"), Headers(scope=scope).get("x-episode-id")
    for given in (query, header):  # each one given is well-formed, even where the body wins
        if given is not None:
            check_episode_id(given)
    return query if query is not None else header


def _lean_reset(request: Request, task_id: str | None) -> Any:
    state = request.app.state
    return serve_reset(request, state.store, state.settings, task_id, _episode_id(request.scope))


def _lean_step(request: Request, task_id: str | None) -> Any:
    state = request.app.state
    return serve_step(request, state.store, state.settings, task_id, _episode_id(request.scope))


def _lean_state(request: Request, task_id: str | None) -> Any:
    task = task_id if task_id is not None else _query(request.scope, "task_id")
    return serve_state(request.app.state.store, task, _episode_id(request.scope))


# The handler of each route, by its first path segment.
_LEAN = {"reset": _lean_reset, "step": _lean_step, "state": _lean_state}


class LeanRoute(APIRoute):
    """An APIRoute whose matched requests go to their `serve_*` function directly (see the
    module's docstring); a method the route does not take is answered as FastAPI does."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in (self.methods or ()):
            await super().handle(scope, receive, send)  # 405
            return
        request = Request(scope, receive, send)
        serve = _LEAN[self.path.split("/")[1]]
        try:
            response = await serve(request, scope["path_params"].get("task_id"))
        except EnvError as exc:
            response = env_error_response(exc)
        await response(scope, receive, send)


router = APIRouter(tags=["episodes"], route_class=LeanRoute)


@router.post("/reset", response_model=StepResult, openapi_extra=_body_doc(ResetRequest))
async def reset(
    request: Request,
    store: Store,
    settings: Config,
    episode_id: EpisodeId,
) -> Any:
    """Start a new episode of `task_id` (default: the first task)."""
    return await serve_reset(request, store, settings, None, episode_id)


@router.post("/reset/{task_id}", response_model=StepResult, openapi_extra=_body_doc(ResetRequest))
async def reset_task(
    task_id: str,
    request: Request,
    store: Store,
    settings: Config,
    episode_id: EpisodeId,
) -> Any:
    """Start a new episode of the task in the path."""
    return await serve_reset(request, store, settings, task_id, episode_id)


@router.post("/step", response_model=StepResult, openapi_extra=_body_doc(StepRequest))
async def step(
    request: Request,
    store: Store,
    settings: Config,
    episode_id: EpisodeId,
) -> Any:
    """Apply one operation to the episode given by id, else to the task's default episode."""
    return await serve_step(request, store, settings, None, episode_id)


@router.post("/step/{task_id}", response_model=StepResult, openapi_extra=_body_doc(Action))
async def step_task(
    task_id: str,
    request: Request,
    store: Store,
    settings: Config,
    episode_id: EpisodeId,
) -> Any:
    """Apply one operation (an action envelope, or `{"action": envelope}`)."""
    return await serve_step(request, store, settings, task_id, episode_id)


@router.get("/state", response_model=EpisodeState)
async def state(store: Store, episode_id: EpisodeId, task_id: str | None = None) -> Any:
    """State of the episode given by id, else of the task's default episode."""
    return await serve_state(store, task_id, episode_id)


@router.get("/state/{task_id}", response_model=EpisodeState)
async def state_task(task_id: str, store: Store, episode_id: EpisodeId) -> Any:
    """State of the task's default episode, or of the episode given by id."""
    return await serve_state(store, task_id, episode_id)
