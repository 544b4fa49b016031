"""A failed OpenEnv mount is reported over real HTTP: the request that waited for it and
/health answer 503 naming it, and both recover once a mount succeeds. The failure is real:
the import of OpenEnv's server fails (its module is blocked in `sys.modules`)."""

from __future__ import annotations

import sys

import httpx
import pytest

from dataclean_env.settings import Settings
from tests.web import LiveServer

BLOCKED = "openenv.core.env_server.http_server"


def test_a_failed_mount_turns_health_unhealthy_until_it_mounts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with (
        LiveServer(Settings(openenv_mount="lazy")) as server,
        httpx.Client(base_url=server.url, timeout=120) as http,
    ):
        monkeypatch.setitem(sys.modules, BLOCKED, None)  # `import` of it now raises
        schema = http.get("/schema")
        assert schema.status_code == 503, schema.text
        assert schema.headers["retry-after"] == "5"
        assert schema.json()["code"] == "OPENENV_UNAVAILABLE"
        assert BLOCKED in schema.json()["detail"]
        health = http.get("/health")
        assert health.status_code == 503
        assert health.headers["retry-after"] == "5"
        body = health.json()
        assert (body["status"], set(body["failed"])) == ("unhealthy", {"openenv"})
        assert body["failed"]["openenv"].startswith("ModuleNotFoundError: ")
        assert BLOCKED in body["failed"]["openenv"]
        assert http.post("/reset/easy_dedup_rename").status_code == 200  # our routes serve
        monkeypatch.undo()
        assert http.get("/schema").status_code == 200
        assert http.get("/health").json()["status"] == "healthy"
