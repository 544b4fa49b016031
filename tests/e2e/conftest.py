"""The app fixtures (`client`, `live_server`)."""

from tests.web import client, live_server  # noqa: F401
