"""The leaderboard's first schema: runs, run_episodes, records, submissions, secrets.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("run_id", sa.String(40), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("model", sa.String(128), nullable=False),
        sa.Column("client", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("episodes", sa.Integer, nullable=False),
        sa.Column("families", sa.JSON, nullable=False),
        sa.Column("server_version", sa.String(32), nullable=False),
        sa.Column("generator_version", sa.String(32), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("completed_at", TS),
    )
    op.create_index("ix_runs_status", "runs", ["status"])
    op.create_table(
        "run_episodes",
        sa.Column("episode_id", sa.String(64), primary_key=True),
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.run_id"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("family", sa.String(32), nullable=False),
        sa.Column("instance_index", sa.BigInteger, nullable=False),
        sa.Column("instance_hash", sa.String(32), nullable=False),
        sa.Column("difficulty", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("deadline", TS, nullable=False),
    )
    op.create_index("ix_run_episodes_run_id", "run_episodes", ["run_id"])
    op.create_index("ix_run_episodes_status", "run_episodes", ["status"])
    op.create_table(
        "records",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "episode_id", sa.String(64), sa.ForeignKey("run_episodes.episode_id"), nullable=False
        ),
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.run_id"), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("model", sa.String(128), nullable=False),
        sa.Column("family", sa.String(32), nullable=False),
        sa.Column("difficulty", sa.String(16), nullable=False),
        sa.Column("instance_hash", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("components", sa.JSON, nullable=False),
        sa.Column("trace", sa.JSON, nullable=False),
        sa.Column("steps", sa.Integer, nullable=False),
        sa.Column("refused", sa.Integer, nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("ended_at", TS, nullable=False),
        sa.Column("recorded_at", TS, nullable=False),
        sa.Column("server_version", sa.String(32), nullable=False),
        sa.Column("grader_version", sa.String(32), nullable=False),
        sa.Column("generator_version", sa.String(32), nullable=False),
        sa.UniqueConstraint("episode_id", "grader_version", name="uq_record_episode_grader"),
    )
    op.create_index("ix_records_run_id", "records", ["run_id"])
    op.create_index("ix_records_grader_version", "records", ["grader_version"])
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("model_name", sa.String(64), nullable=False),
        sa.Column("task_id", sa.String(64), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("steps", sa.Integer, nullable=False),
        sa.Column("client", sa.String(64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "secrets",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("value", sa.String(128), nullable=False),
    )


def downgrade() -> None:
    for table in ("secrets", "submissions", "records", "run_episodes", "runs"):
        op.drop_table(table)
