"""Suites, submitter tokens and normalised scores.

runs gain the suite they play (its composition version), the token they ran under (NULL:
anonymous), what the agent declared, a deadline for the whole run and how many times it
plays each drawn instance; records gain the
suite version they count under, the normalised score and the per-episode figures; tokens
hold a sha256 of each submitter token, never the token.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "tokens",
        sa.Column("token_id", sa.String(16), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("revoked_at", TS),
    )
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("suite", sa.String(32), nullable=True))
        batch.add_column(sa.Column("token_id", sa.String(16), nullable=True))
        batch.add_column(sa.Column("declared", sa.JSON, nullable=True))
        batch.add_column(sa.Column("deadline", TS, nullable=True))
        batch.add_column(sa.Column("rollouts", sa.Integer, nullable=False, server_default="1"))
    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("suite_version", sa.String(96), nullable=True))
        batch.add_column(sa.Column("normalised", sa.Float, nullable=True))
        batch.add_column(sa.Column("figures", sa.JSON, nullable=True))
    op.create_index("ix_records_suite_version", "records", ["suite_version"])


def downgrade() -> None:
    op.drop_index("ix_records_suite_version", "records")
    with op.batch_alter_table("records") as batch:
        for column in ("figures", "normalised", "suite_version"):
            batch.drop_column(column)
    with op.batch_alter_table("runs") as batch:
        for column in ("rollouts", "deadline", "declared", "token_id", "suite"):
            batch.drop_column(column)
    op.drop_table("tokens")
