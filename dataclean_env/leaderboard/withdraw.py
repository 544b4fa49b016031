"""Withdrawing runs: an administrator takes a run off the board, one by one
(`dataclean-env-admin run withdraw RUN_ID --why ...`) or all the runs of a token it revokes.

A withdrawn run's status becomes `withdrawn` (its open episodes too), whatever it was; its
records stay (append-only), and `withdrawals` keeps when, why and what status it had, so
the audit trail holds both the play and its withdrawal. A serving process that holds the
run's episodes ends them at its next sweep (`Leaderboard.sweep`): a step on one is then
refused (409 EPISODE_FINISHED).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, func, insert, select, update

from dataclean_env.leaderboard.tables import run_episodes, runs, withdrawals

WITHDRAWN = "withdrawn"
WHY_LENGTH = 500


def withdraw(connection: Connection, run_ids: Iterable[str], why: str) -> list[str]:
    """Withdraw `run_ids` (those not withdrawn already), saying `why`: the ids withdrawn."""
    chosen = sorted(set(run_ids))
    found = connection.execute(
        select(runs.c.run_id, runs.c.token_id, runs.c.status)
        .where(runs.c.run_id.in_(chosen), runs.c.status != WITHDRAWN)
        .with_for_update()
    ).all()
    if not found:
        return []
    now = datetime.now(UTC)
    ids = [row.run_id for row in found]
    connection.execute(
        insert(withdrawals),
        [
            {
                "run_id": row.run_id,
                "token_id": row.token_id,
                "status_before": row.status,
                "why": why[:WHY_LENGTH],
                "withdrawn_at": now,
            }
            for row in found
        ],
    )
    connection.execute(
        update(run_episodes)
        .where(run_episodes.c.run_id.in_(ids), run_episodes.c.status == "open")
        .values(status=WITHDRAWN)
    )
    connection.execute(
        update(runs)
        .where(runs.c.run_id.in_(ids))
        .values(status=WITHDRAWN, completed_at=func.coalesce(runs.c.completed_at, now))
    )
    return ids


def withdraw_run(engine: Engine, run_id: str, why: str) -> bool:
    """Withdraw one run: whether it was (False: no such run, or withdrawn already)."""
    with engine.begin() as connection:
        return bool(withdraw(connection, [run_id], why))


def withdraw_tokens(connection: Connection, token_ids: list[str], why: str) -> list[str]:
    """Withdraw every run of `token_ids`: the ids withdrawn."""
    chosen = connection.execute(select(runs.c.run_id).where(runs.c.token_id.in_(token_ids)))
    return withdraw(connection, chosen.scalars(), why)


def reason(engine: Engine, run_id: str) -> dict[str, str] | None:
    """Why and when run `run_id` was withdrawn (the latest), or None."""
    with engine.connect() as connection:
        row = connection.execute(
            select(withdrawals.c.why, withdrawals.c.withdrawn_at)
            .where(withdrawals.c.run_id == run_id)
            .order_by(withdrawals.c.id.desc())
            .limit(1)
        ).one_or_none()
    if row is None:
        return None
    at = row.withdrawn_at if row.withdrawn_at.tzinfo else row.withdrawn_at.replace(tzinfo=UTC)
    return {"why": row.why, "at": at.isoformat()}
