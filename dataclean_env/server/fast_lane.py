"""The hot REST routes (reset, step, state) served without FastAPI's per-request machinery.

FastAPI spends more time per request on its routing, dependency injection and exception
stack (about 0.2-0.3 ms) than on reading the body and writing the answer, and these routes
use none of it: the handlers in `routes.episodes` take the request, the store and the
settings, read the body themselves and answer ready-made JSON. `FastLane` is the innermost
middleware, so every guard, metric and log before it still applies; it matches the same
methods and paths as the routes' APIRoutes, reads the episode id of the query or header the
way FastAPI does, and calls those handlers. The APIRoutes stay registered: they document
the routes (/docs, /openapi.json) and answer whatever the lane leaves to them (HEAD, a
trailing slash). An EnvError is answered here as the app's handler would answer it; any
other exception goes up to the server-error handler as before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from dataclean_env.errors import EnvError
from dataclean_env.server.http_errors import env_error_response
from dataclean_env.server.routes import episodes

Handler = Callable[[Request, str | None, str | None], Awaitable[Response]]

# (method, first path segment) -> handler(request, task id of the path, episode id)
_HANDLERS: dict[tuple[str, str], Handler] = {
    ("POST", "reset"): lambda r, task, ep: episodes.serve_reset(
        r, r.app.state.store, r.app.state.settings, task, ep
    ),
    ("POST", "step"): lambda r, task, ep: episodes.serve_step(
        r, r.app.state.store, r.app.state.settings, task, ep
    ),
    ("GET", "state"): lambda r, task, ep: episodes.serve_state(
        r.app.state.store, task if task is not None else _query(r.scope, "task_id"), ep
    ),
}


def _query(scope: Scope, name: str) -> str | None:
    return QueryParams(scope["query_string"]).get(name) if scope["query_string"] else None


def _episode_id(scope: Scope) -> str | None:
    """The episode id of the query, else of the `X-Episode-Id` header (as
    `episodes.addressed_episode` reads them)."""
    episode_id = _query(scope, "episode_id")
    return episode_id if episode_id is not None else Headers(scope=scope).get("x-episode-id")


# The APIRoute of each path template, for the metrics' route label (`scope["route"]`).
_ROUTES = {route.path: route for route in episodes.router.routes if isinstance(route, APIRoute)}


class FastLane:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope.get("root_path"):
            # "/step" -> ["", "step"], "/step/t" -> ["", "step", "t"]; "/step/" is not a task.
            parts = scope["path"].split("/")
            handler = _HANDLERS.get((scope["method"], parts[1])) if len(parts) in (2, 3) else None
            task_id = parts[2] if len(parts) == 3 else None
            if handler is not None and task_id != "":
                template = f"/{parts[1]}" if task_id is None else f"/{parts[1]}/{{task_id}}"
                scope["route"] = _ROUTES[template]
                await self._serve(handler, scope, receive, send, task_id)
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _serve(
        handler: Handler, scope: Scope, receive: Receive, send: Send, task_id: str | None
    ) -> None:
        request = Request(scope, receive, send)
        try:
            response = await handler(request, task_id, _episode_id(scope))
        except EnvError as exc:
            response = env_error_response(exc)
        await response(scope, receive, send)


def install_fast_lane(app: FastAPI) -> None:
    """Add the lane; call it before any other middleware so that it is the innermost."""
    app.add_middleware(FastLane)
