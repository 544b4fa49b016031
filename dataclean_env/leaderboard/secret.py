"""The server secret that seeds the secret split (`DCE_LEADERBOARD_SECRET`).

Given in the environment, it is used as is and never stored. Unset, one is generated on
first start and kept in the database's `secrets` table, so restarts (and every server on a
shared PostgreSQL) draw the same split. Whoever holds it can regenerate the split's gold:
set it explicitly in production, keep database backups as private as the secret.
"""

from __future__ import annotations

import secrets as random_source

from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import IntegrityError

from dataclean_env.leaderboard.tables import secrets

NAME = "leaderboard"


class NoSecret(RuntimeError):
    pass


def load_secret(engine: Engine, given: str | None, create: bool = True) -> bytes:
    """The given secret, else the stored one, else (with `create`) a new stored one."""
    if given:
        return given.encode()
    with engine.begin() as connection:
        stored = connection.execute(select(secrets.c.value).where(secrets.c.name == NAME))
        value = stored.scalar_one_or_none()
    if value is None and not create:
        raise NoSecret("no DCE_LEADERBOARD_SECRET given and none stored in the database")
    if value is None:
        try:
            with engine.begin() as connection:
                fresh = random_source.token_hex(32)
                connection.execute(insert(secrets).values(name=NAME, value=fresh))
            value = fresh
        except IntegrityError:  # another server process stored one first: use that
            with engine.begin() as connection:
                stored = connection.execute(select(secrets.c.value).where(secrets.c.name == NAME))
                value = stored.scalar_one()
    return value.encode()
