"""Rows that report one entity: found by the sorted-neighbourhood method, merged by majority.

A table of one row per entity sometimes holds an entity twice or more: an exact copy, or
further reports from other sources that disagree on a few facts. Record linkage finds such
rows by comparing each row with its neighbours in a sort order (Hernández and Stolfo's
sorted neighbourhood); here the order is the table's protected integer key, so a report
is compared with the `WINDOW` rows before it. A row is another report of an earlier one
when the two agree on every column but at most `MAX_DISAGREEING` (of at least
`MIN_COLUMNS`) and on at least one identifying column: one whose values are nearly all
distinct (`IDENTIFYING_SHARE`), so two different entities that share most of their
attributes (two aircraft of one model) are not taken for one; in a table of `WIDE` columns
or more, agreeing on all but two is evidence enough.

The repair, as two statements of one `sql` step: each entity's first report (the nearest
earlier row that is no report itself) takes, per column, the value a strict majority of the
entity's reports hold (two reports that disagree decide nothing), then the later reports
are deleted.
"""

from __future__ import annotations

from dataclean_env.agents.repair_rules import quoted

WINDOW = 3
MAX_DISAGREEING = 2
MIN_COLUMNS = 5  # fewer columns and two entities agree on all but two too easily
IDENTIFYING_SHARE = 0.7  # distinct values per filled cell of an identifying column
WIDE = 16  # columns from which agreeing on all but two identifies an entity by itself


def identifying(profile: dict[str, dict[str, int]], rows: int) -> list[str]:
    """The columns whose values nearly identify a row (`profile`: filled, distinct)."""
    return [
        column
        for column, seen in profile.items()
        if seen["filled"] * 2 >= rows and seen["distinct"] >= IDENTIFYING_SHARE * seen["filled"]
    ]


def _members(key: str, columns: list[str], ids: list[str]) -> str:
    """A `WITH` clause naming `members(root, k, <columns>)`: every entity of two reports or
    more, its first report `root` and each of its rows `k`."""
    k = quoted(key)
    same = " + ".join(
        f"CAST(a.{quoted(c)} IS NOT DISTINCT FROM b.{quoted(c)} AS INTEGER)" for c in columns
    )
    keyed = " OR ".join(f"a.{quoted(c)} = b.{quoted(c)}" for c in ids) or "TRUE"
    listed = ", ".join(quoted(c) for c in columns)
    return (
        f"WITH r AS (SELECT TRY_CAST({k} AS BIGINT) AS k, {listed} FROM t), "
        f"later AS MATERIALIZED (SELECT DISTINCT b.k FROM r a, range(1, {WINDOW + 1}) w(d) "
        f"JOIN r b ON b.k = a.k + w.d "
        f"WHERE {same} >= {len(columns) - MAX_DISAGREEING} AND ({keyed})), "
        f"firsts AS (SELECT k FROM r WHERE k IS NOT NULL AND k NOT IN (SELECT k FROM later)), "
        f"tagged AS (SELECT f.k AS root, l.k FROM later l ASOF JOIN firsts f ON l.k >= f.k), "
        f"members AS MATERIALIZED (SELECT g.root, r.* FROM (SELECT root, k FROM tagged UNION ALL "
        f"SELECT DISTINCT root, root FROM tagged) g JOIN r ON r.k = g.k)"
    )


def _linkable(
    columns: list[str], profile: dict[str, dict[str, int]], rows: int
) -> list[str] | None:
    """The identifying columns two reports must share one of (none needed in a wide table),
    or None when the table is too narrow or has none."""
    ids = [] if len(columns) >= WIDE else identifying(profile, rows)
    return ids if len(columns) >= MIN_COLUMNS and (ids or len(columns) >= WIDE) else None


def count_query(
    key: str, columns: list[str], profile: dict[str, dict[str, int]], rows: int
) -> str | None:
    """The `query` that counts the later reports (`n`), or None when none can be found."""
    ids = _linkable(columns, profile, rows)
    return None if ids is None else f"{_members(key, columns, ids)} SELECT count(*) AS n FROM later"


def merge_statements(
    key: str, columns: list[str], profile: dict[str, dict[str, int]], rows: int
) -> list[str]:
    """The UPDATE that gives each entity's first report its majority facts, and the DELETE
    of its later reports (none when `count_query` is None)."""
    ids = _linkable(columns, profile, rows)
    if ids is None:
        return []
    members = _members(key, columns, ids)
    votes = []
    sets = []
    for i, column in enumerate(columns):
        c = quoted(column)
        votes.append(
            f"(SELECT root, arg_max({c}, n) AS v{i}, max(n) * 2 > sum(n) AS w{i} FROM "
            f"(SELECT root, {c}, count(*) AS n FROM members GROUP BY root, {c}) GROUP BY root) "
            f"AS m{i} USING (root)"
        )
        sets.append(f"{c} = CASE WHEN m.w{i} THEN m.v{i} ELSE t.{c} END")
    majority = "SELECT * FROM (SELECT DISTINCT root FROM members) " + " ".join(
        f"JOIN {v}" for v in votes
    )
    k = quoted(key)
    update = (
        f"UPDATE t SET {', '.join(sets)} FROM ({members} {majority}) AS m "
        f"WHERE TRY_CAST(t.{k} AS BIGINT) = m.root"
    )
    delete = f"DELETE FROM t WHERE TRY_CAST({k} AS BIGINT) IN ({members} SELECT k FROM later)"
    return [update, delete]
