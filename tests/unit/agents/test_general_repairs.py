"""The reference agent's general repairs, each run on a small table in DuckDB as the `sql`
step runs it: entity reports merged, spelling variants and units normalised, a replacement
seen once kept for a rare value only."""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd

from dataclean_env.agents.column_formats import unit_statement, variant_statements
from dataclean_env.agents.entity_reports import count_query, merge_statements
from dataclean_env.agents.repair_rules import Replace, update_statement
from dataclean_env.agents.unlabelled_repair import fill_statement


def run(table: pd.DataFrame, statements: list[str]) -> list[tuple[Any, ...]]:
    con = duckdb.connect()
    con.register("source", table)
    con.execute("CREATE TABLE t AS SELECT * FROM source")
    for statement in statements:
        con.execute(statement)
    return con.execute("SELECT * FROM t ORDER BY rowid").fetchall()


def profile(table: pd.DataFrame) -> dict[str, dict[str, int]]:
    return {
        c: {"filled": int(table[c].notna().sum()), "distinct": int(table[c].nunique())}
        for c in table.columns
        if c != "id"
    }


ENTITIES = pd.DataFrame(
    {
        "id": list(range(1, 13)),
        "code": ["AAA", "AAA", "AAA", "BBB", "CCC", "CCC"] + [f"Z{i}" for i in range(6)],
        "city": ["Oslo", "Oslo", "Oslo", "Rome", "Lima", "Lima"] + [f"C{i}" for i in range(6)],
        "alt": [99, 10, 10, 20, 30, 30, *list(range(40, 46))],  # row 1's alt is outvoted
        "tz": ["x", "+1", "+1", "+1", "-5", "-5"] + ["+5"] * 6,
        "size": ["S", "S", "M", "L", "M", "M"] + ["S"] * 6,  # the third report alone
    }
)


def test_later_reports_of_an_entity_are_deleted_and_the_first_takes_the_majority() -> None:
    columns = [c for c in ENTITIES.columns if c != "id"]
    statements = merge_statements("id", columns, profile(ENTITIES), len(ENTITIES))
    others = list(ENTITIES.iloc[6:].itertuples(index=False, name=None))
    assert run(ENTITIES, statements) == [
        (1, "AAA", "Oslo", 10, "+1", "S"),
        (4, "BBB", "Rome", 20, "+1", "L"),
        (5, "CCC", "Lima", 30, "-5", "M"),
        *others,
    ]
    query = count_query("id", columns, profile(ENTITIES), len(ENTITIES))
    assert query is not None
    con = duckdb.connect()
    con.register("t", ENTITIES)
    assert con.execute(query).fetchall() == [(3,)]


def test_rows_alike_but_for_their_identifying_column_are_different_entities() -> None:
    # two aircraft of one model: all but the tail number agree
    planes = pd.DataFrame(
        {
            "id": [1, 2, 3, 4],
            "tail": ["N1", "N2", "N3", "N4"],
            "model": ["A320"] * 4,
            "seats": [180] * 4,
            "engines": [2] * 4,
            "maker": ["AIRBUS"] * 4,
        }
    )
    columns = [c for c in planes.columns if c != "id"]
    statements = merge_statements("id", columns, profile(planes), len(planes))
    assert run(planes, statements) == list(planes.itertuples(index=False, name=None))


def test_a_narrow_table_links_no_reports() -> None:
    narrow = ENTITIES[["id", "code", "city", "alt"]]  # three columns
    columns = ["code", "city", "alt"]
    assert count_query("id", columns, profile(narrow), len(narrow)) is None
    assert merge_statements("id", columns, profile(narrow), len(narrow)) == []


def test_rare_spellings_take_the_majority_spelling_of_their_class() -> None:
    values = ["BOEING"] * 60 + ["boeing", "BOEING  ", "B  OEING"] + ["eng"] * 20 + ["ENG"]
    values += ["Two  words"] * 3 + ["Two words"] * 2  # about as common: both left
    table = pd.DataFrame({"maker": values})
    repaired = [v for (v,) in run(table, variant_statements("maker"))]
    expected = ["BOEING"] * 60 + ["BOEING", "BOEING", "B  OEING"] + ["eng"] * 20 + ["ENG"]
    assert repaired == expected + ["Two  words"] * 3 + ["Two words"] * 2


def test_a_second_scale_of_a_numeric_column_is_divided_back() -> None:
    years = [2000 + i % 10 for i in range(95)] + [2004000, 2007000, 2001000, 2003000, 9999]
    table = pd.DataFrame({"year": years})
    repaired = [v for (v,) in run(table, [unit_statement("year")])]
    assert repaired == [*years[:95], 2004, 2007, 2001, 2003, 9999]
    # one stray large value is not a second unit
    stray = pd.DataFrame({"year": [*years[:95], 2004000]})
    assert [v for (v,) in run(stray, [unit_statement("year")])][-1] == 2004000


def test_a_replacement_seen_once_rewrites_only_a_rare_value() -> None:
    table = pd.DataFrame({"state": ["MA"] * 2 + ["IL"] * 5 + ["XX"] * 4})
    rare = [Replace("MA", "IL", rare=True), Replace("XX", "IL", rare=True)]
    repaired = [v for (v,) in run(table, [update_statement("state", rare)])]
    assert repaired == ["IL"] * 7 + ["XX"] * 4


def test_an_empty_cell_takes_its_dependency_group_value() -> None:
    table = pd.DataFrame(
        {
            "model": ["A320"] * 4 + ["B737"] * 3 + ["C100"] * 2,
            "seats": [180, 180, 180, None, 160, 150, None, 90, None],
        }
    )
    repaired = [v for (_, v) in run(table, [fill_statement("model", "seats")])]
    # A320's three agree: filled; B737's two disagree, C100 has one: left empty
    assert repaired == [180, 180, 180, 180, 160, 150, None, 90, None]
