"""A token is bound to one model: a board row is one token's, whatever a client says.

tokens gain the model they play (one token per team and model). A token made before this
takes the model of its first run; one that never ran takes the model its first run names.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tokens") as batch:
        batch.add_column(sa.Column("model", sa.String(128), nullable=True))
    runs = sa.table(
        "runs",
        sa.column("token_id", sa.String),
        sa.column("model", sa.String),
        sa.column("created_at", sa.DateTime),
        sa.column("run_id", sa.String),
    )
    tokens = sa.table("tokens", sa.column("token_id", sa.String), sa.column("model", sa.String))
    first = (
        sa.select(runs.c.model)
        .where(runs.c.token_id == tokens.c.token_id)
        .order_by(runs.c.created_at, runs.c.run_id)
        .limit(1)
        .scalar_subquery()
    )
    op.execute(tokens.update().values(model=first))


def downgrade() -> None:
    with op.batch_alter_table("tokens") as batch:
        batch.drop_column("model")
