"""The ASGI app: `uvicorn main:app --port 7860` (CleanifyAI's and `openenv.yaml`'s entry).

For development only: plain `uvicorn` has no header timeout (slowloris) and none of the
server's other wire settings. Serve with `server` (what the image runs), which gives uvicorn
the options of `dataclean_env.server.processes.serving` (docs/deployment.md).
"""

from dataclean_env.server.app import app

__all__ = ["app"]
