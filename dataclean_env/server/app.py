"""The FastAPI application: wires settings, the task registry, the episode store and routes.

`app` is built on first access (so importing this module costs nothing and reads no data);
`main()` serves it with uvicorn (the `server` console script).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI

from dataclean_env import ENV_NAME, __version__
from dataclean_env.errors import EnvError
from dataclean_env.leaderboard.service import Leaderboard
from dataclean_env.server.episode_store import EpisodeStore
from dataclean_env.server.guards import install_guards
from dataclean_env.server.http_errors import install_error_handlers
from dataclean_env.server.mcp_gateway import McpGateway, McpTransport
from dataclean_env.server.metrics import ObservabilityMiddleware, metrics_endpoint
from dataclean_env.server.openapi_doc import install_openapi
from dataclean_env.server.openenv_routes import LazyOpenEnvMiddleware, OpenEnvMount
from dataclean_env.server.rate_limit import RateLimiter
from dataclean_env.server.routes import episodes, leaderboard, meta, schema, web
from dataclean_env.server.serving import uvicorn_options
from dataclean_env.settings import Settings, get_settings
from dataclean_env.step_memory import StepMemory
from dataclean_env.tasks import TaskRegistry, registry_for

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, registry: TaskRegistry | None = None) -> FastAPI:
    settings = settings or get_settings()
    registry = registry or registry_for(settings)
    app = FastAPI(
        lifespan=_lifespan,
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
    app.state.store = EpisodeStore(
        registry,
        capacity=settings.max_episodes,
        ttl_seconds=settings.episode_ttl_seconds,
        idle_seconds=settings.episode_idle_seconds,
        per_client=settings.episodes_per_client,
        memory=StepMemory() if settings.step_memory else None,  # this app's own
    )
    install_error_handlers(app)
    app.include_router(meta.router)
    app.include_router(episodes.router)
    app.include_router(web.router)  # the browser page (before OpenEnv's catch-all routes)
    app.state.leaderboard = Leaderboard(settings, app.state.store)  # opens its database lazily
    app.include_router(leaderboard.router)
    app.include_router(schema.router)
    app.add_route("/metrics", metrics_endpoint, include_in_schema=False)
    # OpenEnv's server takes seconds to import: mounted after start-up (see openenv_routes),
    # behind the guards (which run before the mount waits) and with the same rate limiter.
    app.state.limiter = limiter = RateLimiter(
        settings.creation_rate_per_second, settings.creation_burst
    )
    app.state.openenv = mount = OpenEnvMount(app, registry, settings, limiter)
    # MCP clients' transport (FastMCP's) on /mcp, behind every guard and the mount's wait.
    app.state.mcp = McpGateway(mount, limiter)
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
        help="worker processes behind an episode-affine front (default: 1, no front)",
    )
    args = parser.parse_args()
    if args.workers > 1:
        from dataclean_env.server import workers

        workers.serve(args.host, args.port, args.workers)
        return
    app = create_app(settings)
    app.state.open_leaderboard_at_start = True  # see _lifespan
    uvicorn.run(app, host=args.host, port=args.port, **uvicorn_options(settings))


if __name__ == "__main__":
    main()
