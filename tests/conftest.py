"""Shared fixtures: a test client on a fresh app, and a real uvicorn on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry, default_registry
from dataclean_env.tasks.fixed import load_metadata

TASK_IDS = [
    "easy_dedup_rename",
    "medium_missing_dtype",
    "hard_full_pipeline",
    "expert_sales_pipeline",
]
# The generated families: one task id each, instances chosen by seed and split.
GENERATED_IDS = ["fix_types", "normalize_dedupe", "full_pipeline", "crm", "orders", "inventory"]
ALL_TASK_IDS = [*TASK_IDS, *GENERATED_IDS]
# The reward object of the contract, in its order.
REWARD_FIELDS = [
    "total",
    "duplicate_score",
    "missing_score",
    "dtype_score",
    "outlier_score",
    "schema_score",
    "penalty",
]
# The reward object of custom and generated tasks.
PRESERVATION_FIELDS = [
    "total",
    "repair_score",
    "preservation_score",
    "row_integrity_score",
    "penalty",
]
# The observation fields that describe the table (a refused step must not change them).
TABLE_FIELDS = (
    "columns",
    "shape",
    "missing_values",
    "dtypes",
    "duplicate_count",
    "sample_rows",
    "sample_offset",
    "dataset_info",
)


def ok(response) -> dict[str, Any]:
    """The JSON of a 200 answer (else the test fails with the body)."""
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture(scope="session")
def registry() -> TaskRegistry:
    return default_registry()


@pytest.fixture(scope="session")
def metadata() -> dict[str, dict]:
    """task_id -> its entry in datasets/task_metadata.json (with the optimal plan)."""
    return {entry["task_id"]: entry for entry in load_metadata(Settings().datasets_dir)}


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(Settings())) as test_client:
        yield test_client


class LiveServer:
    """uvicorn serving a fresh app on 127.0.0.1 in a thread; stopped by `close()`."""

    def __init__(self, settings: Settings | None = None):
        self.app = create_app(settings or Settings())
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(self.app, log_level="warning", lifespan="off")
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

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


@pytest.fixture
def live_server() -> Iterator[LiveServer]:
    server = LiveServer().start()
    try:
        yield server
    finally:
        server.close()
