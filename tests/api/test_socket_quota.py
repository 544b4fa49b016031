"""The per-client session quota (/ws sockets and MCP sessions), counted together
(`limit_store`) by two processes, each its own connection to one SQLite limit store, as
`server --workers 2` runs them. Beside tests/unit/server/test_limit_store.py, here because
the quota is web stack."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataclean_env.errors import ClientQuotaReached
from dataclean_env.rate_limit import RateLimit
from dataclean_env.server.limits.limit_store import SharedCounts
from dataclean_env.server.limits.session_quota import SessionQuota
from dataclean_env.settings import Settings
from tests.support import limit_database


def test_the_session_quota_per_client_counts_every_process(tmp_path: Path) -> None:
    path = tmp_path / "limits.sqlite3"
    quotas = []
    for index in (0, 1):
        settings = Settings(sessions_per_client=3, process_index=index, processes=2)
        limiter = RateLimit("creations", 100, 1.0)
        counts = SharedCounts(limit_database(path, index))
        quotas.append(SessionQuota(settings, limiter, counts))
    zero, one = quotas
    zero.take("x")
    zero.take("x")
    one.take("x")
    with pytest.raises(ClientQuotaReached):
        one.take("x")
    with pytest.raises(ClientQuotaReached):
        zero.take("x")
    zero.release("x")
    one.take("x")  # a closed socket frees its place, on any process
    assert (zero.open, one.open) == ({"x": 1}, {"x": 2})
