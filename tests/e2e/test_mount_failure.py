"""A failed OpenEnv mount is reported over real HTTP: the request that waited for it and
/health answer 503 naming it, and in an app without a process to end both recover once a
mount succeeds. The failure is real: the import of OpenEnv's server fails (its module is
blocked in `sys.modules`). The `server` command, run as a process, ends with status 3 when
its mount fails (FastMCP broken by the environment): at start-up with an eager mount, after
answering the request that waited with a lazy one, unasked with the background one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from dataclean_env.settings import Settings
from tests.e2e.test_server_entry import free_port
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


# ── the `server` process ends when its mount fails ──────────────────────────────────────


def broken_install(folder: Path) -> dict[str, str]:
    """The environment of a server whose FastMCP (imported by OpenEnv's server, not by our
    own routes) is broken: a package of that name first on PYTHONPATH that fails to import."""
    package = folder / "fastmcp"
    package.mkdir()
    (package / "__init__.py").write_text('raise ImportError("fastmcp is broken here")\n')
    return {**os.environ, "PYTHONPATH": str(folder)}


def serve(folder: Path, mount: str, port: int) -> subprocess.Popen[str]:
    """`server` (app.main) as a process, its FastMCP broken, its board in `folder`."""
    command = [sys.executable, "-m", "dataclean_env.server.app", "--host", "127.0.0.1"]
    return subprocess.Popen(
        [*command, "--port", str(port)],
        env={
            **broken_install(folder),
            "DCE_OPENENV_MOUNT": mount,
            "DCE_LEADERBOARD_DB": str(folder / "lb.sqlite3"),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def ended(process: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, stderr


EXIT_LINE = "OpenEnv's routes could not be mounted (ImportError: fastmcp"


def test_an_eager_mount_that_fails_ends_the_process_before_it_serves(tmp_path: Path) -> None:
    status, stderr = ended(serve(tmp_path, "eager", free_port()))
    assert status == 3, stderr[-3000:]
    assert EXIT_LINE in stderr and "exiting with status 3" in stderr
    assert "Uvicorn running" not in stderr  # it never listened


def test_a_lazy_mount_that_fails_answers_503_then_ends_the_process(tmp_path: Path) -> None:
    port = free_port()
    process = serve(tmp_path, "lazy", port)
    try:
        health = wait_for_health(process, port)
        assert health.status_code == 200
        schema = httpx.get(f"http://127.0.0.1:{port}/schema", timeout=60)
        assert (schema.status_code, schema.json()["code"]) == (503, "OPENENV_UNAVAILABLE")
        assert schema.headers["retry-after"] == "5"
    finally:
        status, stderr = ended(process)
    assert status == 3, stderr[-3000:]
    assert EXIT_LINE in stderr and "exiting with status 3" in stderr


def test_a_background_mount_that_fails_ends_the_process_unasked(tmp_path: Path) -> None:
    status, stderr = ended(serve(tmp_path, "background", free_port()))
    assert status == 3, stderr[-3000:]
    assert EXIT_LINE in stderr


def wait_for_health(process: subprocess.Popen[str], port: int) -> httpx.Response:
    while process.poll() is None:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)
        except httpx.TransportError:
            time.sleep(0.1)  # not listening yet
    raise AssertionError(f"the server ended (status {process.returncode}) before serving")
