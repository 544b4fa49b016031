"""Withdrawals: a run taken off the board by its administrator, and why.

A withdrawn run keeps its records (they are append-only); its status becomes `withdrawn`
and `withdrawals` says when, why, and under which token (a revoked token withdraws all of
its runs).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "withdrawals",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.run_id"), nullable=False),
        sa.Column("token_id", sa.String(16)),
        sa.Column("status_before", sa.String(16), nullable=False),
        sa.Column("why", sa.String(500), nullable=False),
        sa.Column("withdrawn_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_withdrawals_run_id", "withdrawals", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_withdrawals_run_id", "withdrawals")
    op.drop_table("withdrawals")
