"""The leaderboard's tables (SQLAlchemy Core). Migrations in `migrations/` create them.

runs          a run: who (token, or anonymous), which suite or families, how many episodes,
              open / complete / timed_out / aborted
run_episodes  its episodes: instance (index and hash, never the seed), deadline, status
records       append-only: one per episode and grader version, with the trace, the score, the
              normalised score, and the suite version the record counts under
submissions   self-reported scores (CleanifyAI's form); never ranked with verified ones
secrets       the server secret, when it was generated rather than given
holders       server processes that hold episodes, with their last heartbeat
tokens        submitter tokens: a name, a model, and the token's sha256 (never the token)
withdrawals   runs an administrator took off the board (one by one, or by revoking their
              token): when, why, and the status each had
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
)

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("run_id", String(40), primary_key=True),
    Column("name", String(64), nullable=False),
    Column("model", String(128), nullable=False),
    Column("client", String(64), nullable=False),
    Column("status", String(16), nullable=False, index=True),
    Column("episodes", Integer, nullable=False),
    Column("families", JSON, nullable=False),
    Column("server_version", String(32), nullable=False),
    Column("generator_version", String(32), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("completed_at", DateTime(timezone=True)),
    Column("suite", String(32)),  # the suite's composition version; NULL: a practice run
    Column("token_id", String(16)),  # NULL: anonymous
    Column("declared", JSON),  # what the agent said of itself (prompt, temperature, ...)
    Column("deadline", DateTime(timezone=True)),  # the whole run's
    Column("rollouts", Integer, nullable=False, server_default="1"),  # plays per instance
)

run_episodes = Table(
    "run_episodes",
    metadata,
    Column("episode_id", String(64), primary_key=True),
    Column("run_id", String(40), ForeignKey("runs.run_id"), nullable=False, index=True),
    Column("position", Integer, nullable=False),
    Column("family", String(32), nullable=False),
    Column("instance_index", BigInteger, nullable=False),
    Column("instance_hash", String(32), nullable=False),
    Column("difficulty", String(16), nullable=False),
    Column("status", String(16), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("deadline", DateTime(timezone=True), nullable=False),
    # The process (holders.holder_id) whose memory holds the episode; NULL: made before
    # holders were recorded.
    Column("holder_id", String(32)),
)

records = Table(
    "records",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("episode_id", String(64), ForeignKey("run_episodes.episode_id"), nullable=False),
    Column("run_id", String(40), ForeignKey("runs.run_id"), nullable=False, index=True),
    Column("name", String(64), nullable=False),
    Column("model", String(128), nullable=False),
    Column("family", String(32), nullable=False),
    Column("difficulty", String(16), nullable=False),
    Column("instance_hash", String(32), nullable=False),
    Column("status", String(16), nullable=False),
    Column("score", Float, nullable=False),
    Column("components", JSON, nullable=False),
    Column("trace", JSON, nullable=False),
    Column("steps", Integer, nullable=False),
    Column("refused", Integer, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("ended_at", DateTime(timezone=True), nullable=False),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    Column("server_version", String(32), nullable=False),
    Column("grader_version", String(32), nullable=False, index=True),
    Column("generator_version", String(32), nullable=False),
    Column("suite_version", String(96), index=True),  # NULL: a practice run's
    Column("normalised", Float),
    Column("figures", JSON),  # rows lost, correct cells changed, exact match
    UniqueConstraint("episode_id", "grader_version", name="uq_record_episode_grader"),
)

submissions = Table(
    "submissions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("model_name", String(64), nullable=False),
    Column("task_id", String(64), nullable=False),
    Column("score", Float, nullable=False),
    Column("steps", Integer, nullable=False),
    Column("client", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

secrets = Table(
    "secrets",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("value", String(128), nullable=False),
)

holders = Table(
    "holders",
    metadata,
    Column("holder_id", String(32), primary_key=True),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("seen_at", DateTime(timezone=True), nullable=False),
)

tokens = Table(
    "tokens",
    metadata,
    Column("token_id", String(16), primary_key=True),
    Column("name", String(64), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
    # The one model its runs play (NULL: made before models were bound; its first run's).
    Column("model", String(128)),
)

withdrawals = Table(
    "withdrawals",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(40), ForeignKey("runs.run_id"), nullable=False, index=True),
    Column("token_id", String(16)),
    Column("status_before", String(16), nullable=False),
    Column("why", String(500), nullable=False),
    Column("withdrawn_at", DateTime(timezone=True), nullable=False),
)
