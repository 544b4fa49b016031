"""One of `server --workers N`'s processes (`processes.workers` starts this module as a
program): the app on a Unix socket, behind the balancer. Here, beside the app it serves, so
that `processes/` imports nothing above it."""

from __future__ import annotations

import sys

import uvicorn

from dataclean_env.server.app import create_app, open_leaderboard
from dataclean_env.server.processes.serving import behind_balancer, worker_options
from dataclean_env.settings import get_settings


def serve_worker(path: str) -> None:
    """One process: the app on the Unix socket `path`, served as a single process serves it."""
    settings = get_settings()
    app = create_app(settings)
    open_leaderboard(app)
    uvicorn.run(behind_balancer(app, settings), uds=path, **worker_options(settings))


if __name__ == "__main__":
    serve_worker(sys.argv[1])
