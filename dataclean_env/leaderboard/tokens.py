"""Submitter tokens: a secret bound to a name and a model, shown once when made, stored as
its sha256.

One token is one row on a board (per suite version): every run under it is pooled there,
under the token's name and model, so a client cannot buy rows by naming its model anew (a
run naming another model is refused, 422 TOKEN_MODEL_MISMATCH). The administrator makes one
token per team and model; a token made before models were bound plays the model of its
first run. A revoked or unknown token is refused (401 INVALID_TOKEN); revoking a token
withdraws all of its runs (`withdraw`). To replace a leaked
token without touching its runs, `rotate` gives it a new secret.
"""

from __future__ import annotations

import hashlib
import secrets as random_source
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, Row, insert, or_, select, update

from dataclean_env.errors import InvalidName, InvalidToken, TokenModelMismatch
from dataclean_env.leaderboard.names import skeleton
from dataclean_env.leaderboard.tables import tokens
from dataclean_env.leaderboard.withdraw import withdraw_tokens

PREFIX = "dce_"  # so a leaked token is recognisable in a log or a repository
MAX_TOKEN_LENGTH = 128


@dataclass(frozen=True)
class Submitter:
    token_id: str
    name: str
    model: str


class TokenTaken(ValueError):
    """An active token already stands for this name and model."""


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _secret() -> str:
    return PREFIX + random_source.token_urlsafe(32)


def create(engine: Engine, name: str, model: str) -> tuple[str, str]:
    """A new token for `name` playing `model` (both already board names): its id and the
    token itself. TokenTaken if an active token stands for them already."""
    token_id = "tok-" + random_source.token_hex(6)
    token = _secret()
    with engine.begin() as connection:
        refuse_look_alike(connection, name)
        taken = connection.execute(
            select(tokens.c.token_id).where(
                tokens.c.name == name, tokens.c.model == model, tokens.c.revoked_at.is_(None)
            )
        ).first()
        if taken is not None:
            raise TokenTaken(
                f"token {taken.token_id} already stands for {name} / {model}: one token per "
                "team and model (rotate it to replace its secret)"
            )
        connection.execute(
            insert(tokens).values(
                token_id=token_id,
                name=name,
                model=model,
                token_hash=digest(token),
                created_at=datetime.now(UTC),
            )
        )
    return token_id, token


def refuse_look_alike(connection: Connection, name: str) -> None:
    """InvalidName if `name` has the confusable skeleton of another holder's name (UTS #39):
    a reader could not tell the two rows apart."""
    shape = skeleton(name)
    for other in connection.execute(select(tokens.c.name).distinct()).scalars():
        if other != name and skeleton(other) == shape:
            raise InvalidName(
                f"name: {name!r} looks like the name of another holder, {other!r} (their "
                "confusable skeletons are one, Unicode UTS #39)"
            )


def rotate(engine: Engine, token_id: str) -> str | None:
    """A new secret for the active token `token_id` (its runs stay its own); None if there
    is no such token."""
    token = _secret()
    with engine.begin() as connection:
        changed = connection.execute(
            update(tokens)
            .where(tokens.c.token_id == token_id, tokens.c.revoked_at.is_(None))
            .values(token_hash=digest(token))
        ).rowcount
    return token if changed else None


def listed(engine: Engine) -> list[tuple[str, str, str | None, datetime, datetime | None]]:
    """(id, name, model, created, revoked or None) of every token, oldest first."""
    with engine.connect() as connection:
        rows = connection.execute(
            select(
                tokens.c.token_id,
                tokens.c.name,
                tokens.c.model,
                tokens.c.created_at,
                tokens.c.revoked_at,
            ).order_by(tokens.c.created_at, tokens.c.token_id)
        ).all()
    return [(r.token_id, r.name, r.model, r.created_at, r.revoked_at) for r in rows]


def revoke(engine: Engine, which: str) -> list[str]:
    """Revoke the token with id `which`, or every token named `which`, and withdraw all
    their runs (open ones end; every one leaves the board): the tokens' ids."""
    with engine.begin() as connection:
        chosen = or_(tokens.c.token_id == which, tokens.c.name == which)
        ids = list(
            connection.execute(
                select(tokens.c.token_id).where(chosen, tokens.c.revoked_at.is_(None))
            ).scalars()
        )
        connection.execute(
            update(tokens).where(tokens.c.token_id.in_(ids)).values(revoked_at=datetime.now(UTC))
        )
        if ids:
            withdraw_tokens(connection, ids, f"token {', '.join(ids)} revoked")
    return ids


def bearer(authorization: str) -> str:
    """The token of an `Authorization: Bearer <token>` header's value, or InvalidToken."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise InvalidToken("Authorization must be: Bearer <token>")
    return token.strip()


def _valid(connection: Connection, token: str) -> Row[Any, Any, Any, Any]:
    """The token's row (id, name, model), or InvalidToken if it is unknown or revoked."""
    if not token.startswith(PREFIX) or len(token) > MAX_TOKEN_LENGTH:
        raise InvalidToken("not a submitter token (they start with dce_)")
    row = connection.execute(
        select(tokens.c.token_id, tokens.c.name, tokens.c.model, tokens.c.revoked_at).where(
            tokens.c.token_hash == digest(token)
        )
    ).one_or_none()
    if row is None:
        raise InvalidToken("unknown submitter token")
    if row.revoked_at is not None:
        raise InvalidToken(f"submitter token {row.token_id} is revoked")
    return row


def token_id(engine: Engine, token: str) -> str:
    """The id of a valid submitter token, or InvalidToken (binds no model)."""
    with engine.connect() as connection:
        return str(_valid(connection, token).token_id)


def submitter(engine: Engine, token: str, model: str | None) -> Submitter:
    """Who `token` stands for, or InvalidToken; `model`, what the run names (None: the
    token's), must be the token's model, else TokenModelMismatch. A token not yet bound to
    a model is bound to the one its first run names."""
    with engine.begin() as connection:
        row = _valid(connection, token)
        bound = row.model
        if bound is None:
            if model is None:
                raise TokenModelMismatch(
                    f"model: token {row.token_id} is bound to no model yet; name one"
                )
            connection.execute(
                update(tokens).where(tokens.c.token_id == row.token_id).values(model=model)
            )
            bound = model
    if model is not None and model != bound:
        raise TokenModelMismatch(
            f"model: token {row.token_id} plays {bound!r}, not {model!r}; one token is one "
            "board row (ask the administrator for a token per model)"
        )
    return Submitter(row.token_id, row.name, bound)
