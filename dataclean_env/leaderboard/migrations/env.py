"""Alembic environment: runs on the connection `db.migrate` hands over (no alembic.ini)."""

from __future__ import annotations

from alembic import context

from dataclean_env.leaderboard.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata)
with context.begin_transaction():
    context.run_migrations()
