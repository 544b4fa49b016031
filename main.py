"""The ASGI app: `uvicorn main:app --port 7860`."""

from dataclean_env.api.app import create_app

app = create_app()
