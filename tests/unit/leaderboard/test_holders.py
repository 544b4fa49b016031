"""A leaderboard run is aborted only by the process that holds its episodes, or once that
process is gone: two server processes (workers, replicas) share one database, and one's
start-up or sweep must not cancel the runs the other is serving."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update

from dataclean_env.leaderboard.service import Leaderboard
from dataclean_env.leaderboard.tables import holders, run_episodes, runs
from dataclean_env.server.store.episode_store import EpisodeStore
from dataclean_env.settings import Settings
from dataclean_env.tasks import registry_for


def server_process(database: Path) -> Leaderboard:
    """What one server process has: its own episode store and leaderboard service."""
    settings = Settings(leaderboard_db=database, leaderboard_secret="holders-test-secret")
    store = EpisodeStore(registry_for(settings), capacity=64, ttl_seconds=3600)
    return Leaderboard(settings, store)


def statuses(board: Leaderboard, run_id: str) -> tuple[str, list[str]]:
    with board.open().connect() as connection:
        run = connection.execute(select(runs.c.status).where(runs.c.run_id == run_id)).scalar_one()
        episodes = connection.execute(
            select(run_episodes.c.status).where(run_episodes.c.run_id == run_id)
        ).scalars()
        return run, list(episodes)


def long_past_deadline(board: Leaderboard, run_id: str) -> None:
    """The run's deadline, in the database, is an hour gone (grace included)."""
    with board.open().begin() as connection:
        connection.execute(
            update(run_episodes)
            .where(run_episodes.c.run_id == run_id)
            .values(deadline=datetime.now(UTC) - timedelta(hours=1))
        )


@pytest.fixture
def owner_and_run(tmp_path: Path) -> tuple[Path, Leaderboard, str]:
    database = tmp_path / "board.sqlite3"
    owner = server_process(database)
    run = owner.create_run("holders", "model-x", "127.0.0.1", families=["crm"], episodes=2)
    long_past_deadline(owner, run["run_id"])
    return database, owner, run["run_id"]


def test_another_process_starting_or_sweeping_leaves_a_held_run_open(owner_and_run) -> None:
    database, _, run_id = owner_and_run
    other = server_process(database)
    other.open()  # a worker or replica starting up
    assert statuses(other, run_id) == ("open", ["open", "open"])
    other.sweep()  # its periodic sweep
    assert statuses(other, run_id) == ("open", ["open", "open"])


def test_a_run_whose_process_stopped_is_aborted_by_another(owner_and_run) -> None:
    database, owner, run_id = owner_and_run
    owner.close()  # a clean stop
    other = server_process(database)
    other.open()
    assert statuses(other, run_id) == ("aborted", ["aborted", "aborted"])


def test_a_run_whose_process_vanished_is_aborted_once_its_heartbeat_is_old(
    owner_and_run,
) -> None:
    database, owner, run_id = owner_and_run
    other = server_process(database)
    other.open()
    assert statuses(other, run_id) == ("open", ["open", "open"])
    with other.open().begin() as connection:  # the owner was killed: no more heartbeats
        connection.execute(
            update(holders)
            .values(seen_at=datetime.now(UTC) - timedelta(hours=1))
            .where(holders.c.holder_id == owner.holder_id)
        )
    other.heartbeat()
    assert statuses(other, run_id) == ("aborted", ["aborted", "aborted"])


def holder_rows(board: Leaderboard) -> list[str]:
    with board.open().connect() as connection:
        return list(connection.execute(select(holders.c.holder_id)).scalars())


def test_a_process_registers_again_without_a_duplicate_key(tmp_path: Path) -> None:
    """An open that failed after registering (or a close that could not unregister) is
    retried: registering again must replace this process's row, not collide with it."""
    board = server_process(tmp_path / "board.sqlite3")
    engine = board.open()
    board._register(engine)  # what a retried open does
    assert holder_rows(board) == [board.holder_id]


def test_a_heartbeat_restores_a_lost_holder_row(owner_and_run) -> None:
    """If this process's row is gone (deleted by hand, or a close that half failed), the
    next heartbeat puts it back: otherwise the others would take the process for dead and
    abort the runs it still serves."""
    database, owner, run_id = owner_and_run
    with owner.open().begin() as connection:
        connection.execute(holders.delete().where(holders.c.holder_id == owner.holder_id))
    owner.heartbeat()
    assert holder_rows(owner) == [owner.holder_id]
    server_process(database).sweep()  # another process sweeping
    assert statuses(owner, run_id) == ("open", ["open", "open"])
