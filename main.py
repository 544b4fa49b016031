"""The ASGI app: `uvicorn main:app --port 7860` (CleanifyAI's and `openenv.yaml`'s entry)."""

from dataclean_env.server.app import app

__all__ = ["app"]
