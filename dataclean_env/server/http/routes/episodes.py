"""The episode URLs: reset / step / state, per task path or by episode id (the contract's
REST table), and where their engine work runs.

An episode id may come in the body, the `episode_id` query parameter or the `X-Episode-Id`
header (in that order of precedence); without one, a call uses the task's default episode.
Steps on one episode are serialised by the episode's lock.

Each URL is declared once, by the `router` at the end, whose endpoints serve it and whose
declarations are the OpenAPI document's; `EpisodeRoutes` calls those same endpoints without
FastAPI's per-request machinery. A step's path: `EpisodeRoutes` -> `step_task` ->
`serve_step` (body and ids: `server/http/requests.py`; the episode: `server/store/episode_store.py`)
-> `run_sized` -> `Episode.step`.

Where engine work runs: on the event loop when small and cheap, in a worker thread else. A
step on a small table takes less time than a hop to a worker thread (about a millisecond on
the machines we measured), so running it inline is faster for everyone; a large table goes
to a thread so that the event loop keeps serving other clients meanwhile. So does an
operation whose cost the client controls beyond the table's size (`Operation.slow`:
regex_replace, sql, query, and program, fix and standardise, which may run them): it may
use the whole step time limit, and on the event loop it would stall every other client,
/health included. Such steps share a few threads of their
own, so they cannot take the pool's threads from everyone else either, and wait for them
in turns by client (`server/limits/fair_slots.py`), so one client's many cannot hold up another's.
Calls on one episode (steps, and the page's table reads and heuristic) take turns for it on
the event loop, holding no thread while they wait (a flood of them on a busy episode would
otherwise take the pool's threads from everyone); one whose turn comes while something else
holds the episode's lock (the leaderboard's sweep, a /ws reset joining it) waits for the
lock in a thread: on the event loop, it would stall everyone. A state does not wait: it
reads the episode as last committed (`Episode.read_committed`).
The /ws door runs its engine work here too.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar
from weakref import WeakKeyDictionary

import anyio
from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import Response
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette._utils import get_route_path
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, QueryParams
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from dataclean_env.engine.episode import Episode, EpisodeLock
from dataclean_env.engine.episode_ids import check_episode_id
from dataclean_env.engine.parsing import parse_reset_options
from dataclean_env.errors import EnvError, TaskMismatch
from dataclean_env.operations import canonical_name, get_operation
from dataclean_env.rate_limit import CALLER, client_key
from dataclean_env.schemas import Action, EpisodeState, ResetRequest, StepResult
from dataclean_env.server.http.http_errors import env_error_response
from dataclean_env.server.http.openapi_doc import request_body
from dataclean_env.server.http.requests import StepRequest, parse_step, read_json
from dataclean_env.server.limits.fair_slots import FairSlots
from dataclean_env.server.metrics import ENGINE_SECONDS
from dataclean_env.server.store.episode_store import EpisodeStore
from dataclean_env.server.store.reward_visibility import blind_view

INLINE_CELLS = 20_000
SLOW_THREADS = 4

T = TypeVar("T")
_slow_threads: anyio.CapacityLimiter | None = None  # their own: not the pool's threads
_slow_slots = FairSlots(SLOW_THREADS)


# ── where engine work runs (see the module's docstring) ──────────────────────
def is_slow(operation: str) -> bool:
    """True for an operation whose time the client controls (an unknown name: False)."""
    try:
        return get_operation(canonical_name(operation)).slow
    except EnvError:
        return False


def _timed(work: Callable[[], T]) -> T:
    start = time.perf_counter()
    try:
        return work()
    finally:
        ENGINE_SECONDS.observe(time.perf_counter() - start)


async def run_sized(
    work: Callable[[], T],
    cells: int,
    slow: bool = False,
    waits: bool = False,
    episode: Episode | None = None,
) -> T:
    """`work` on the event loop or in a thread; `waits`: it may wait on I/O (a reset that
    settles with the shared limit store) or on another call (a /ws reset joining an issued
    episode), or takes longer than a step (a page's read), so always in a thread. `episode`:
    the episode whose lock `work` takes. Calls on one episode take turns for it here, on the
    event loop, so at most one of them waits in a thread (for a holder of the lock that is
    not a call, such as the leaderboard's sweep); inline work holds the lock from here,
    taken only if it is free, so the event loop never waits for it."""
    if episode is None:
        return await _run_sized(work, cells, slow, waits, None)
    async with _turn(episode):
        return await _run_sized(work, cells, slow, waits, episode.lock)


# Each event loop's turns by episode (an episode is served by one loop; a test may run apps
# in several).
_turns: WeakKeyDictionary[asyncio.AbstractEventLoop, WeakKeyDictionary[Episode, asyncio.Lock]]
_turns = WeakKeyDictionary()


def _turn(episode: Episode) -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    turns = _turns.get(loop)
    if turns is None:
        turns = _turns[loop] = WeakKeyDictionary()
    turn = turns.get(episode)
    if turn is None:
        turn = turns[episode] = asyncio.Lock()
    return turn


async def _run_sized(
    work: Callable[[], T], cells: int, slow: bool, waits: bool, lock: EpisodeLock | None
) -> T:
    global _slow_threads
    if slow:
        if _slow_threads is None:
            _slow_threads = anyio.CapacityLimiter(SLOW_THREADS)
        async with _slow_slots.slot(CALLER.get()):  # in turns by client
            return await anyio.to_thread.run_sync(_timed, work, limiter=_slow_threads)
    if cells <= INLINE_CELLS and not waits:
        if lock is None:
            return _timed(work)
        if lock.acquire(blocking=False):
            try:
                return _timed(work)
            finally:
                lock.release()
    return await run_in_threadpool(_timed, work)


async def run_engine(
    work: Callable[[], BaseModel],
    cells: int,
    slow: bool = False,
    waits: bool = False,
    episode: Episode | None = None,
) -> Response:
    # pydantic writes the JSON itself (in Rust): the same bytes as JSONResponse of
    # model_dump(mode="json"), in a quarter of the time. A step's result arrives with its
    # JSON already written by the engine (StepResult.json_bytes).
    result = await run_sized(work, cells, slow, waits, episode)
    body = result.json_bytes() if isinstance(result, StepResult) else result.model_dump_json()
    return Response(body, media_type="application/json")


def _first(*values: str | None) -> str | None:
    return next((v for v in values if v is not None), None)


# ── the handlers ─────────────────────────────────────────────────────────────
async def serve_reset(
    request: Request,
    store: EpisodeStore,
    task_id: str | None,
    episode_id: str | None,
) -> Response:
    """Reset (`task_id` of the path, else of the body, else the first task)."""
    body = parse_reset_options(await read_json(request), "body")
    task = task_id or body.task_id or store.registry.task_ids()[0]
    store.known(task)
    if body.task_id is not None:
        store.known(body.task_id)
    if task_id is not None and body.task_id not in (None, task_id):
        raise TaskMismatch(f"path says task {task_id!r}, body says {body.task_id!r}")
    spec = store.registry.spec(task)  # 404 before any work
    name = _first(body.episode_id, episode_id)
    if name is not None:
        check_episode_id(name)
    store.place.check(name)  # 421 before the reset is counted
    client = client_key(request.scope)
    await request.app.state.limiter.take_async(client, "resets")

    def work() -> StepResult:
        blind = body.reward_mode == "hidden"
        episode = store.reset(task, body.seed, name, body.split, blind=blind, client=client)
        return blind_view(episode, episode.result())

    # A reset settles with the shared limit store (when there is one): off the event loop.
    return await run_engine(work, spec.cells, waits=store.counts.shared)


async def serve_step(
    request: Request,
    store: EpisodeStore,
    task_id: str | None,
    episode_id: str | None,
) -> Response:
    """One step of the episode the call names (else the task's default episode)."""
    call = parse_step(await read_json(request))
    if call.task_id is not None:
        store.known(call.task_id)
    if task_id is not None and call.task_id not in (None, task_id):
        raise TaskMismatch(f"path says task {task_id!r}, body says {call.task_id!r}")
    wanted = task_id or call.task_id
    if wanted:
        store.known(wanted)

    episode = await _find(store, wanted, _first(call.episode_id, episode_id), request)

    def work() -> StepResult:
        with episode.lock:
            return blind_view(episode, episode.step(call.action))

    cells, slow = episode.cells, is_slow(call.action.operation)
    return await run_engine(work, cells, slow, episode.step_waits, episode)


async def serve_state(
    request: Request, store: EpisodeStore, task_id: str | None, episode_id: str | None
) -> Response:
    """The state of the episode the call names (else the task's default episode)."""
    if task_id is not None:
        store.known(task_id)
    episode = await _find(store, task_id, episode_id, request)

    def work() -> EpisodeState:
        # The state as last committed, not waiting for a step in progress: a call never
        # holds a thread waiting for another call's step.
        return episode.read_committed(lambda: blind_view(episode, episode.state()))

    return await run_engine(work, episode.cells)


async def _find(
    store: EpisodeStore, task_id: str | None, episode_id: str | None, request: Request
) -> Episode:
    """`store.find` for the caller. A call naming an issued episode not yet joined joins it
    (its table is made, and it takes a place under the caller's quota, as a reset would), in
    a thread: building and settling with a shared limit store never block the event loop."""
    if episode_id is not None and store.unjoined(episode_id):
        client = client_key(request.scope)
        return await run_in_threadpool(store.find, task_id, episode_id, client)
    return store.find(task_id, episode_id)  # no join: nobody's quota is counted


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


Endpoint = Callable[..., Awaitable[Response]]


class EpisodeRoutes:
    """The fast path to the episode URLs: `/reset`, `/step`, `/state`, each alone or followed
    by `/{task_id}`. A request for one of them with its method goes straight to the
    endpoint declared for it (a dict lookup, not FastAPI's walk over every route, its
    dependency injection and per-request wrapping: together more than reading the body and
    writing the answer take), given the ids as FastAPI would give them; anything else
    (another method: 405, a trailing slash: a redirect, any other URL) goes on to FastAPI's
    router."""

    def __init__(self, app: ASGIApp, routes: list[BaseRoute]):
        self.app = app
        # Each URL's declared route (the template the metrics label a request with) and
        # whether its endpoint takes a task id, by its first path segment and method.
        self.routes: dict[tuple[str, str], APIRoute] = {
            (route.path, method): route
            for route in routes
            if isinstance(route, APIRoute)
            for method in route.methods or ()
        }
        self.methods = {path.split("/")[1]: method for path, method in self.routes}
        self.takes_task = {
            key: "task_id" in inspect.signature(route.endpoint).parameters
            for key, route in self.routes.items()
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        matched = self._match(scope) if scope["type"] == "http" else None
        if matched is None:
            await self.app(scope, receive, send)
            return
        endpoint, ids = matched
        try:
            ids["episode_id"] = _episode_id(scope)
            response = await endpoint(Request(scope, receive, send), **ids)
        except EnvError as exc:
            response = env_error_response(exc)
        await response(scope, receive, send)

    def _match(self, scope: Scope) -> tuple[Endpoint, dict[str, str | None]] | None:
        parts = get_route_path(scope).split("/")
        if len(parts) not in (2, 3) or parts[0] or parts[1] not in self.methods:
            return None
        method = self.methods[parts[1]]
        if scope["method"] != method or (len(parts) == 3 and not parts[2]):
            return None
        template = f"/{parts[1]}" if len(parts) == 2 else f"/{parts[1]}/{{task_id}}"
        scope["route"] = route = self.routes[(template, method)]
        task_id = parts[2] if len(parts) == 3 else None
        scope["path_params"] = {} if task_id is None else {"task_id": task_id}
        ids: dict[str, str | None] = {}
        if self.takes_task[(template, method)]:  # of the path, else of the query (/state)
            ids["task_id"] = task_id if task_id is not None else _query(scope, "task_id")
        return route.endpoint, ids


# The episode URLs: what the docs show (the path, the query and header ids, the body) and
# the endpoints that serve them (through `EpisodeRoutes`, which passes the same ids).
router = APIRouter(tags=["episodes"])
EpisodeQuery = Annotated[str | None, Query(description="Episode to use (else the task's default).")]
EpisodeHeader = Annotated[str | None, Header(alias="X-Episode-Id")]


async def addressed_episode(
    episode_id: EpisodeQuery = None, x_episode_id: EpisodeHeader = None
) -> str | None:
    """The episode id of the query, else of the `X-Episode-Id` header (the body's wins over
    both), as `_episode_id` reads it on the fast path."""
    for given in (episode_id, x_episode_id):  # each one given is well-formed
        if given is not None:
            check_episode_id(given)
    return episode_id if episode_id is not None else x_episode_id


EpisodeId = Annotated[str | None, Depends(addressed_episode)]


@router.post("/reset", response_model=StepResult, openapi_extra=request_body(ResetRequest))
async def reset(request: Request, episode_id: EpisodeId) -> Response:
    """Start a new episode of `task_id` (default: the first task)."""
    return await serve_reset(request, request.app.state.store, None, episode_id)


@router.post(
    "/reset/{task_id}", response_model=StepResult, openapi_extra=request_body(ResetRequest)
)
async def reset_task(request: Request, task_id: str, episode_id: EpisodeId) -> Response:
    """Start a new episode of the task in the path."""
    return await serve_reset(request, request.app.state.store, task_id, episode_id)


@router.post("/step", response_model=StepResult, openapi_extra=request_body(StepRequest))
async def step(request: Request, episode_id: EpisodeId) -> Response:
    """Apply one operation to the episode given by id, else to the task's default episode."""
    return await serve_step(request, request.app.state.store, None, episode_id)


@router.post(
    "/step/{task_id}",
    response_model=StepResult,
    openapi_extra=request_body(
        Action, example={"operation": "remove_duplicates", "parameters": {}}
    ),
)
async def step_task(request: Request, task_id: str, episode_id: EpisodeId) -> Response:
    """Apply one operation (an action envelope, or `{"action": envelope}`)."""
    return await serve_step(request, request.app.state.store, task_id, episode_id)


@router.get("/state", response_model=EpisodeState)
async def state(request: Request, episode_id: EpisodeId, task_id: str | None = None) -> Response:
    """State of the episode given by id, else of the task's default episode."""
    return await serve_state(request, request.app.state.store, task_id, episode_id)


@router.get("/state/{task_id}", response_model=EpisodeState)
async def state_task(request: Request, task_id: str, episode_id: EpisodeId) -> Response:
    """State of the task's default episode, or of the episode given by id."""
    return await serve_state(request, request.app.state.store, task_id, episode_id)
