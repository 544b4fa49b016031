"""/validate runs the checker on every task, which takes the CPU for a while: calls that
arrive while a run is going share its report (sixty at once slowed /health to 2.6 s)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.requests import Request

from dataclean_env.engine.checker import check_registry
from dataclean_env.server.app import create_app
from dataclean_env.server.http.routes import meta
from dataclean_env.settings import Settings
from dataclean_env.tasks import TaskRegistry


def test_calls_during_a_run_share_it_and_a_later_call_runs_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = create_app(Settings())
    registry: TaskRegistry = app.state.store.registry
    runs = 0

    def counted(checked: TaskRegistry) -> dict[str, Any]:
        nonlocal runs
        runs += 1
        return check_registry(checked)

    monkeypatch.setattr(meta, "check_registry", counted)
    request = Request({"type": "http", "app": app, "method": "GET", "headers": []})

    async def calls(n: int) -> list[dict[str, Any]]:
        return await asyncio.gather(*(meta.validate(request, registry) for _ in range(n)))

    reports = asyncio.run(calls(8))
    assert runs == 1
    assert all(report == reports[0] for report in reports) and reports[0]["openenv_valid"] is True
    assert asyncio.run(calls(1)) == [reports[0]] and runs == 2
