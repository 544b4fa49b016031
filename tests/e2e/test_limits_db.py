"""The shared limit store on a real PostgreSQL server (`.ci/setup-postgres.sh` runs one on
127.0.0.1:54329; DCE_TEST_DATABASE_URL overrides), as replicas on several machines share it:
concurrent admissions through two processes' stores never pass the cap, a bucket is spent
once across them, and two replica servers over real HTTP count one cap; the store lost
answers 503 LIMITS_UNAVAILABLE to a reset, never to a step."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from dataclean_env.errors import RateLimited, StoreFull
from dataclean_env.rate_limit import RateLimit
from dataclean_env.server.limits.limit_store import LimitDatabase, SharedBuckets, SharedCounts
from dataclean_env.server.processes.affinity import Place, home
from dataclean_env.server.store.episode_store import EpisodeStore
from dataclean_env.tasks import default_registry
from tests.e2e.scale_sessions import ROOT, free_port, stop, wait_healthy
from tests.tools import PG_URL

pytestmark = pytest.mark.needs("postgres")
TASK = "easy_dedup_rename"


@pytest.fixture
def limits_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test."""
    import psycopg

    name = f"dce_l_{secrets.token_hex(6)}"
    with psycopg.connect(PG_URL, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield PG_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        drop(name)


def drop(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def homed(index: int, count: int, prefix: str = "pg") -> list[str]:
    return [i for i in (f"{prefix}-{n}" for n in range(10_000)) if home(i, 2) == index][:count]


def opened(url: str, slot: int) -> LimitDatabase:
    database = LimitDatabase(url, slot)
    database.open()
    return database


def test_concurrent_admissions_on_two_processes_never_pass_the_cap(limits_url: str) -> None:
    """40 resets at once, half homed on each process, for a capacity of 10: exactly 10 are
    held, the other 30 refused, whatever the interleaving (SELECT ... FOR UPDATE)."""
    stores = [
        EpisodeStore(
            default_registry(),
            10,
            ttl_seconds=3600,
            place=Place(i, 2),
            counts=SharedCounts(opened(limits_url, i)),
        )
        for i in (0, 1)
    ]
    ids = homed(0, 20) + homed(1, 20)

    def reset(episode_id: str) -> str:
        try:
            stores[home(episode_id, 2)].reset(TASK, episode_id=episode_id, client=episode_id)
        except StoreFull:
            return "full"
        return "held"

    with ThreadPoolExecutor(16) as pool:
        outcomes = list(pool.map(reset, ids))
    assert (outcomes.count("held"), outcomes.count("full")) == (10, 30)
    assert sum(len(store) for store in stores) == 10


def test_a_bucket_is_spent_once_across_processes(limits_url: str) -> None:
    first, second = (
        RateLimit("creations", 3, 0.0001, SharedBuckets(opened(limits_url, slot)))
        for slot in (0, 1)
    )
    with ThreadPoolExecutor(6) as pool:
        taken = list(pool.map(lambda n: _took((first, second)[n % 2], "c"), range(6)))
    assert sorted(taken) == [False] * 3 + [True] * 3


def _took(limit: RateLimit, client: str) -> bool:
    try:
        limit.take(client)
    except RateLimited:
        return False
    return True


def replica(tmp_path: Path, index: int, url: str) -> tuple[subprocess.Popen[bytes], str]:
    """Replica `index` of 2, as on its own machine: one process, the shared store."""
    port = free_port()
    env = {
        **os.environ,
        "DCE_PROCESS_INDEX": str(index),
        "DCE_PROCESSES": "2",
        "DCE_LIMITS_DB": url,
        "DCE_MAX_EPISODES": "3",
        "DCE_CREATION_BURST": "100",
        "DCE_LEADERBOARD_DB": str(tmp_path / f"board{index}.sqlite3"),
    }
    argv = [sys.executable, "-m", "dataclean_env.server.app", "--host", "127.0.0.1"]
    process = subprocess.Popen([*argv, "--port", str(port)], cwd=ROOT, env=env)
    address = f"http://127.0.0.1:{port}"
    wait_healthy(address, process)
    return process, address


def test_replicas_on_several_machines_count_one_cap(limits_url: str, tmp_path: Path) -> None:
    started = [replica(tmp_path, i, limits_url) for i in (0, 1)]
    try:
        (_, zero), (_, one) = started
        statuses = [
            httpx.post(f"{zero}/reset", json={"episode_id": i}, timeout=60).status_code
            for i in homed(0, 3)
        ]
        assert statuses == [200, 200, 200]
        full = httpx.post(f"{one}/reset", json={"episode_id": homed(1, 1)[0]}, timeout=60)
        assert (full.status_code, full.json()["code"]) == (503, "SERVER_FULL"), full.text
        assert full.headers["retry-after"] == "30"  # replica 1 holds none: the usual wait

        # The store lost: a reset is refused with a true 503, a step goes on.
        drop(limits_url.rsplit("/", 1)[1])
        lost = httpx.post(f"{zero}/reset", json={"episode_id": homed(0, 4)[3]}, timeout=60)
        assert (lost.status_code, lost.json()["code"]) == (503, "LIMITS_UNAVAILABLE"), lost.text
        assert lost.headers["retry-after"] == "5"
        assert lost.json()["detail"].startswith(
            "the server's limit store (DCE_LIMITS_DB) cannot be reached"
        )
        step = httpx.post(
            f"{zero}/step",
            json={"episode_id": homed(0, 1)[0], "operation": "remove_duplicates", "parameters": {}},
            timeout=60,
        )
        assert step.status_code == 200, step.text
    finally:
        for process, _ in started:
            stop(process)
