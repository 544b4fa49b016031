"""The /ws guard's per-client socket quota, counted together (`limit_store`) by two
processes, each its own connection to one SQLite limit store, as `server --workers 2` runs
them. Beside tests/unit/server/test_limit_store.py, here because the guard is web stack."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataclean_env.errors import ClientQuotaReached
from dataclean_env.server.guards import WebSocketGuard
from dataclean_env.server.limit_store import SharedCounts
from dataclean_env.server.rate_limit import RateLimit
from dataclean_env.settings import Settings
from tests.support import limit_database


def test_the_socket_quota_per_client_counts_every_process(tmp_path: Path) -> None:
    path = tmp_path / "limits.sqlite3"
    guards = []
    for index in (0, 1):
        settings = Settings(sessions_per_client=3, process_index=index, processes=2)
        limiter = RateLimit("creations", 100, 1.0)
        counts = SharedCounts(limit_database(path, index))
        guards.append(WebSocketGuard(None, settings, limiter, counts))  # type: ignore[arg-type]
    zero, one = guards
    zero._open("x")
    zero._open("x")
    one._open("x")
    with pytest.raises(ClientQuotaReached):
        one._open("x")
    with pytest.raises(ClientQuotaReached):
        zero._open("x")
    zero._close("x")
    one._open("x")  # a closed socket frees its place, on any process
    assert (zero.open, one.open) == ({"x": 1}, {"x": 2})
