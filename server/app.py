"""OpenEnv's entry point convention: `server` (see pyproject) serves the app with uvicorn."""

from __future__ import annotations

import argparse

import uvicorn

from dataclean_env.api.app import create_app
from dataclean_env.settings import get_settings


def main() -> None:
    settings = get_settings()
    parser = argparse.ArgumentParser(description="Serve Data Cleaning OpenEnv.")
    parser.add_argument("--host", default=settings.host)
    parser.add_argument("--port", type=int, default=settings.port)
    args = parser.parse_args()
    uvicorn.run(create_app(settings), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
