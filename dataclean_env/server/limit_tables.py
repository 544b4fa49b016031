"""The tables of the shared limit store (`limit_store`), created on first open. Their names
start with `limit_`, so they may live in the leaderboard's own PostgreSQL database."""

from __future__ import annotations

from sqlalchemy import Column, Float, Integer, MetaData, String, Table

LOCK = 7_406_222  # the advisory lock under which processes create the tables (any constant)
KINDS = ("episodes", "sessions", "sockets")  # what the caps count

metadata = MetaData()

buckets = Table(
    "limit_buckets",
    metadata,
    Column("name", String(), primary_key=True),
    Column("client", String(), primary_key=True),
    Column("tokens", Float, nullable=False),
    Column("at", Float, nullable=False),
)
# The process holding each slot (DCE_PROCESS_INDEX): only its generation's counts count.
slots = Table(
    "limit_slots",
    metadata,
    Column("slot", Integer, primary_key=True),
    Column("generation", String(16), nullable=False),
)
# What each process holds: per kind, per client ("": the process's total).
counts = Table(
    "limit_counts",
    metadata,
    Column("generation", String(16), primary_key=True),
    Column("kind", String(16), primary_key=True),
    Column("client", String(), primary_key=True),
    Column("slot", Integer, nullable=False),
    Column("n", Integer, nullable=False),
)
# One row per kind, locked by an admission (SELECT ... FOR UPDATE).
locks = Table("limit_locks", metadata, Column("kind", String(16), primary_key=True))
