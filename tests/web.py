"""Web-stack fixtures for the api and e2e tiers: a TestClient on a fresh app, and a real
uvicorn on 127.0.0.1 (`LiveServer`), stopped when the test ends."""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from dataclean_env.server.app import create_app
from dataclean_env.server.processes.serving import uvicorn_options
from dataclean_env.settings import Settings


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(leaderboard_db=tmp_path / "leaderboard.sqlite3")
    with TestClient(create_app(settings)) as test_client:
        yield test_client


# For tests that play several clients from one socket: 127.0.0.1 named a trusted proxy, so
# the X-Forwarded-For a test sends names the client (by default no proxy is trusted).
LOCAL_PROXY = Settings(forwarded_allow_ips="127.0.0.1")


class LiveServer:
    """uvicorn serving a fresh app on 127.0.0.1 in a thread; stopped by `close()`."""

    def __init__(self, settings: Settings | None = None):
        settings = settings or Settings()
        if settings.leaderboard_db == Settings().leaderboard_db:  # unless named: its own board
            folder = Path(tempfile.mkdtemp(prefix="dce-live-"))
            settings = settings.model_copy(update={"leaderboard_db": folder / "lb.sqlite3"})
        self.app = create_app(settings)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        # The options `server` uses (timeouts, sizes), so the wire behaves as in production.
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="off", **uvicorn_options(settings)
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def start(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("uvicorn did not start")

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


@pytest.fixture
def live_server() -> Iterator[LiveServer]:
    with LiveServer() as server:
        yield server
