"""The FastAPI application: wires settings, the task registry, the episode store and routes.

`app` is built on first access (so importing this module costs nothing and reads no data);
`main()` serves it with uvicorn (the `server` console script).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, NoReturn

import uvicorn
from fastapi import FastAPI
from uvicorn.config import STARTUP_FAILURE

from dataclean_env import ENV_NAME, __version__
from dataclean_env.engine.step_memory import StepMemory
from dataclean_env.errors import EnvError
from dataclean_env.leaderboard.service import Leaderboard
from dataclean_env.operations.sql import sandbox_pool
from dataclean_env.server.http.guards import creation_limit, install_guards
from dataclean_env.server.http.head import HeadAsGet
from dataclean_env.server.http.http_errors import install_error_handlers
from dataclean_env.server.http.openapi_doc import install_openapi
from dataclean_env.server.http.routes import docs, episodes, leaderboard, meta, schema, web
from dataclean_env.server.limits.client_limits import episode_quota
from dataclean_env.server.limits.limit_store import limits_for
from dataclean_env.server.limits.session_quota import SessionQuota
from dataclean_env.server.metrics import ObservabilityMiddleware, metrics_endpoint
from dataclean_env.server.openenv.mcp_gateway import McpGateway, McpTransport
from dataclean_env.server.openenv.openenv_routes import (
    LazyOpenEnvMiddleware,
    MountFailed,
    OpenEnvMount,
)
from dataclean_env.server.processes.affinity import Place
from dataclean_env.server.processes.serving import uvicorn_options
from dataclean_env.server.store.episode_store import EpisodeStore
from dataclean_env.settings import Settings, get_settings
from dataclean_env.tasks import TaskRegistry, registry_for

log = logging.getLogger(__name__)

# The `server` process's status when OpenEnv's routes cannot be mounted: uvicorn's own for an
# app that could not start, so a supervisor sees one code for "this server did not come up".
MOUNT_FAILED_EXIT = STARTUP_FAILURE


def create_app(settings: Settings | None = None, registry: TaskRegistry | None = None) -> FastAPI:
    settings = settings or get_settings()
    registry = registry or registry_for(settings)
    app = FastAPI(
        lifespan=_lifespan,
        docs_url=None,  # ours, served offline (routes/docs.py)
        redoc_url=None,
        title="Data Cleaning OpenEnv",
        version=__version__,
        description=(
            "Clean a dirty table one operation per step; each step is scored cell by cell "
            "against a hidden gold table."
        ),
        # FastAPI's OpenTelemetry hooks look for configured providers on every request; this
        # server reports through Prometheus (/metrics) and its JSON request log instead.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.settings = settings
    place = Place.of(settings)
    app.state.limits = limits = limits_for(settings)
    # Caps are the whole server's: counted together in a shared store, else divided.
    cap = (lambda whole: whole) if limits.counts.shared else place.share
    app.state.store = EpisodeStore(
        registry,
        capacity=cap(settings.max_episodes),
        ttl_seconds=settings.episode_ttl_seconds,
        idle_seconds=settings.episode_idle_seconds,
        per_client=None if (own := episode_quota(settings).per_client) is None else cap(own),
        place=place,
        memory=StepMemory() if settings.step_memory else None,  # this app's own
        counts=limits.counts,
    )
    install_error_handlers(app)
    app.include_router(meta.router)
    app.include_router(docs.router)
    app.mount(docs.ASSETS, docs.assets(), name="docs-assets")
    app.include_router(episodes.router)
    app.include_router(web.router)  # the browser page (before OpenEnv's catch-all routes)
    # Opens its database lazily.
    app.state.leaderboard = Leaderboard(settings, app.state.store, limits.buckets)
    app.include_router(leaderboard.router)
    app.include_router(schema.router)
    app.add_route("/metrics", metrics_endpoint, include_in_schema=False)
    # The router of the episode URLs, in front of FastAPI's (see routes/episodes.py).
    app.add_middleware(episodes.EpisodeRoutes, routes=episodes.router.routes)
    app.add_middleware(HeadAsGet)  # inside the guards and the metrics: they see HEAD
    # OpenEnv's server takes seconds to import: mounted after start-up (see openenv_routes),
    # behind the guards (which run before the mount waits) and with the same rate limiter.
    app.state.limiter = limiter = creation_limit(settings, limits.buckets)
    # Every door's sessions (/ws sockets, MCP sessions) within one quota per client.
    app.state.session_quota = quota = SessionQuota(
        settings, limiter, limits.counts, token_holder=app.state.leaderboard.token_id
    )
    app.state.openenv = mount = OpenEnvMount(app, registry, settings, limiter)
    # MCP clients' transport (FastMCP's) on /mcp, behind every guard and the mount's wait.
    app.state.mcp = McpGateway(mount, quota)
    app.add_middleware(McpTransport, gateway=app.state.mcp)
    app.add_middleware(LazyOpenEnvMiddleware, mount=mount)
    install_guards(app, settings, limiter)
    install_openapi(app, registry.task_ids(), ENV_NAME)
    if settings.openenv_mount == "eager":
        mount.now()
    app.add_middleware(ObservabilityMiddleware, json_logs=settings.log_json)
    log.info("loaded %d tasks: %s", len(registry.task_ids()), ", ".join(registry.task_ids()))
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    warm = None
    if app.state.settings.openenv_mount == "background":
        warm = asyncio.create_task(app.state.openenv.ensure())
    if getattr(app.state, "open_leaderboard_at_start", False):
        # In a thread once serving: its migrations (alembic, SQLAlchemy) take about half a
        # second, which /health need not wait for; a leaderboard call meanwhile waits for
        # the same open (Leaderboard.open holds a lock).
        asyncio.get_running_loop().run_in_executor(None, open_leaderboard, app)
    heartbeat = asyncio.create_task(_leaderboard_heartbeat(app.state.leaderboard))
    # The SQL sandbox's first worker (an interpreter importing DuckDB and pandas) starts
    # now, not inside the first SQL step.
    asyncio.get_running_loop().run_in_executor(None, sandbox_pool().warm)
    yield
    if warm is not None and not warm.done():
        warm.cancel()
    heartbeat.cancel()
    await app.state.mcp.aclose()
    await asyncio.to_thread(app.state.leaderboard.close)  # its runs are no longer held


async def _leaderboard_heartbeat(board: Leaderboard) -> None:
    """Tell the processes sharing the database that this one still holds its runs."""
    from dataclean_env.leaderboard.service import HEARTBEAT_S

    while True:
        await asyncio.sleep(HEARTBEAT_S)
        try:
            await asyncio.to_thread(board.heartbeat)
        except Exception:  # the database may be down: the next beat retries
            log.exception("leaderboard heartbeat failed")


def __getattr__(name: str) -> Any:
    # `from dataclean_env.server.app import app` (and uvicorn's "module:app") build the app on
    # first use, once; OpenEnv's convention is a module-level `app`.
    if name == "app":
        globals()["app"] = application = create_app()
        return application
    raise AttributeError(name)


def open_leaderboard(app: FastAPI) -> None:
    """Migrations and the secret at start-up, not on the first leaderboard call."""
    try:
        app.state.leaderboard.open()
    except EnvError as error:  # logged; the leaderboard answers 503 until it can open
        log.error("%s", error.detail)


def main() -> None:
    settings = get_settings()
    parser = argparse.ArgumentParser(description="Serve Data Cleaning OpenEnv.")
    parser.add_argument("--host", default=settings.host)
    parser.add_argument("--port", type=int, default=settings.port)
    parser.add_argument(
        "--workers",
        type=int,
        default=settings.workers,
        help="server processes behind HAProxy, routed by episode (default: 1, no balancer)",
    )
    args = parser.parse_args()
    if args.workers > 1:
        from dataclean_env.server.processes import workers

        if workers.balancer_available():
            raise SystemExit(workers.serve(args.host, args.port, args.workers))
        print(workers.NO_BALANCER.format(count=args.workers), file=sys.stderr)
    try:
        app = create_app(settings)
    except MountFailed as failed:  # DCE_OPENENV_MOUNT=eager: nothing has been served yet
        _exit_for_mount(str(failed))
    app.state.open_leaderboard_at_start = True  # see _lifespan
    server = uvicorn.Server(
        uvicorn.Config(app, host=args.host, port=args.port, **uvicorn_options(settings))
    )
    # A failed mount later (background or lazy): the request that waited has its 503, then
    # the server stops as on SIGTERM (open requests are answered) and the process exits.
    app.state.openenv.on_failure = lambda failure: setattr(server, "should_exit", True)
    server.run()
    if app.state.openenv.failure is not None:
        _exit_for_mount(app.state.openenv.failure)
    if not server.started:
        sys.exit(STARTUP_FAILURE)  # as uvicorn.run: the server did not start (a port in use)


def _exit_for_mount(failure: str) -> NoReturn:
    log.critical(
        "OpenEnv's routes could not be mounted (%s): exiting with status %d so that the "
        "supervisor starts a new server",
        failure,
        MOUNT_FAILED_EXIT,
    )
    sys.exit(MOUNT_FAILED_EXIT)


if __name__ == "__main__":
    main()
