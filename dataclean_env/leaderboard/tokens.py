"""Submitter tokens: a secret bound to a name, shown once when made, stored as its sha256.

A run started with `Authorization: Bearer <token>` goes under the token's name; a revoked or
unknown token is refused (401 INVALID_TOKEN). Several tokens may carry one name (to rotate
one: create the next, then revoke the old by id); revoking a name revokes all of its tokens.
"""

from __future__ import annotations

import hashlib
import secrets as random_source
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, insert, or_, select, update

from dataclean_env.errors import InvalidToken
from dataclean_env.leaderboard.tables import tokens

PREFIX = "dce_"  # so a leaked token is recognisable in a log or a repository
MAX_TOKEN_LENGTH = 128


@dataclass(frozen=True)
class Submitter:
    token_id: str
    name: str


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create(engine: Engine, name: str) -> tuple[str, str]:
    """A new token for `name` (already a board name): its id and the token itself."""
    token_id = "tok-" + random_source.token_hex(6)
    token = PREFIX + random_source.token_urlsafe(32)
    with engine.begin() as connection:
        connection.execute(
            insert(tokens).values(
                token_id=token_id, name=name, token_hash=digest(token), created_at=datetime.now(UTC)
            )
        )
    return token_id, token


def listed(engine: Engine) -> list[tuple[str, str, datetime, datetime | None]]:
    """(id, name, created, revoked or None) of every token, oldest first."""
    with engine.connect() as connection:
        rows = connection.execute(
            select(
                tokens.c.token_id, tokens.c.name, tokens.c.created_at, tokens.c.revoked_at
            ).order_by(tokens.c.created_at, tokens.c.token_id)
        ).all()
    return [(r.token_id, r.name, r.created_at, r.revoked_at) for r in rows]


def revoke(engine: Engine, which: str) -> int:
    """Revoke the token with id `which`, or every token named `which`: how many."""
    with engine.begin() as connection:
        return connection.execute(
            update(tokens)
            .where(or_(tokens.c.token_id == which, tokens.c.name == which))
            .where(tokens.c.revoked_at.is_(None))
            .values(revoked_at=datetime.now(UTC))
        ).rowcount


def bearer(authorization: str) -> str:
    """The token of an `Authorization: Bearer <token>` header's value, or InvalidToken."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise InvalidToken("Authorization must be: Bearer <token>")
    return token.strip()


def submitter(engine: Engine, token: str) -> Submitter:
    """Who `token` stands for, or InvalidToken."""
    if not token.startswith(PREFIX) or len(token) > MAX_TOKEN_LENGTH:
        raise InvalidToken("not a submitter token (they start with dce_)")
    with engine.connect() as connection:
        row = connection.execute(
            select(tokens.c.token_id, tokens.c.name, tokens.c.revoked_at).where(
                tokens.c.token_hash == digest(token)
            )
        ).one_or_none()
    if row is None:
        raise InvalidToken("unknown submitter token")
    if row.revoked_at is not None:
        raise InvalidToken(f"submitter token {row.token_id} is revoked")
    return Submitter(row.token_id, row.name)
