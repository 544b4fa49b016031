"""The tables of the shared limit store (`limit_store`), created on first open. Their names
start with `limit_`, so they may live in the leaderboard's own PostgreSQL database."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    delete,
    func,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

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


class Statements:
    """The statements a reset or a session runs, built once per store with bound parameters:
    building a SQLAlchemy statement costs more than SQLite takes to run it. Parameters are
    named apart from the columns (SQLAlchemy keeps a column's own name for its SET and
    VALUES)."""

    def __init__(self, dialect: str) -> None:
        insert = (postgresql if dialect == "postgresql" else sqlite).insert
        bucket = (buckets.c.name == bindparam("b_name")) & (
            buckets.c.client == bindparam("b_client")
        )
        self.bucket = select(buckets.c.tokens, buckets.c.at).where(bucket).with_for_update()
        self.set_bucket = (
            update(buckets).where(bucket).values(tokens=bindparam("b_tokens"), at=bindparam("b_at"))
        )
        self.make_bucket = (
            insert(buckets)
            .values(
                name=bindparam("b_name"),
                client=bindparam("b_client"),
                tokens=bindparam("b_tokens"),
                at=bindparam("b_at"),
            )
            .on_conflict_do_nothing()
            .returning(buckets.c.name)  # a row only if this insert made it
        )
        self.lock = (
            select(locks.c.kind).where(locks.c.kind == bindparam("c_kind")).with_for_update()
        )
        live = counts.join(
            slots, (counts.c.slot == slots.c.slot) & (counts.c.generation == slots.c.generation)
        )
        # What the other processes' live generations hold of a kind, for one client key.
        self.held = (
            select(func.coalesce(func.sum(counts.c.n), 0))
            .select_from(live)
            .where(
                (counts.c.kind == bindparam("c_kind"))
                & (counts.c.slot != bindparam("c_slot"))
                & (counts.c.client == bindparam("c_client"))
            )
        )
        mine = (
            (counts.c.generation == bindparam("c_generation"))
            & (counts.c.kind == bindparam("c_kind"))
            & (counts.c.client == bindparam("c_client"))
        )
        self.drop_count = delete(counts).where(mine)
        publish = insert(counts).values(
            slot=bindparam("c_slot"),
            generation=bindparam("c_generation"),
            kind=bindparam("c_kind"),
            client=bindparam("c_client"),
            n=bindparam("c_n"),
        )
        self.set_count = publish.on_conflict_do_update(
            index_elements=["generation", "kind", "client"], set_={"n": publish.excluded.n}
        )
