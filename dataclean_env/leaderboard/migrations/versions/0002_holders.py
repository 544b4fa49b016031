"""Which server process holds a run's episodes, and when each process was last alive.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "holders",
        sa.Column("holder_id", sa.String(32), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("seen_at", TS, nullable=False),
    )
    # NULL for episodes made before holders were recorded: any process may abort those.
    with op.batch_alter_table("run_episodes") as batch:
        batch.add_column(sa.Column("holder_id", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("run_episodes") as batch:
        batch.drop_column("holder_id")
    op.drop_table("holders")
