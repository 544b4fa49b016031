"""The per-column table (generation/columns.py): the orders it draws, dirties, states and
repairs in, its copies, and the frames it types."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dataclean_env.generation.columns import (
    COLUMNS,
    STRIP,
    Column,
    Copies,
    Table,
    each,
)
from dataclean_env.generation.treatments import act
from dataclean_env.tasks.generated import MODULES


class Recorder:
    """Stands in for a Card: records the rules stated, in order."""

    def __init__(self) -> None:
        self.rules: list[str] = []

    def state(self, rule: str, **fields: Any) -> None:
        self.rules.append(rule if rule != "cast" else f"cast {fields['col']}")


def table(**options: Any) -> Table:
    columns = (
        Column("id", each([1, 2, 3]), dtype="typed", typed_export=True),
        Column(
            "name",
            lambda row: f"n{row['id']}",
            dirt=lambda row: row["name"].upper(),
            rules=lambda card: card.state("upper", col="name"),
            repair=lambda: [act("upper", column="name")],
        ),
        Column(
            "amount",
            lambda row: row["id"] * 10,
            dirt=lambda row: str(row["amount"]),
            dtype="typed",
            rules=lambda card: card.state("cast", col="amount"),
            repair=lambda: [act("fix_dtype", column="amount", dtype="int")],
            styled=True,
        ),
    )
    return Table(
        random.Random(7),
        3,
        columns,
        (STRIP,),
        **{"style": "us", "copies": Copies(2, exact=True, key="id"), **options},
    )


def test_default_orders_are_the_columns_then_the_table_rules() -> None:
    made = table()
    card = Recorder()
    made.state(card)  # type: ignore[arg-type]
    assert card.rules == ["upper", "numbers", "cast amount", "exact_duplicates"]
    assert [step["operation"] for step in made.plan()] == [
        "upper",
        "fix_dtype",
        "strip",
        "remove_duplicates",
    ]


def test_an_order_names_items_and_columns_stands_for_the_rest() -> None:
    made = table(card_order=("copies", COLUMNS, "name"), plan_order=("strip", COLUMNS))
    card = Recorder()
    made.state(card)  # type: ignore[arg-type]
    assert card.rules == ["exact_duplicates", "numbers", "cast amount", "upper"]
    assert [step["operation"] for step in made.plan()] == ["strip", "upper", "fix_dtype"]


def test_the_style_is_not_stated_when_every_styled_column_arrives_typed() -> None:
    made = table()
    typed = Column("amount", lambda row: 1, dtype="typed", typed_export=True, styled=True)
    card = Recorder()
    Table(made.rng, 1, (typed,), style="us").state(card)  # type: ignore[arg-type]
    assert card.rules == []


def test_both_frames_are_typed_by_the_declarations() -> None:
    dirty, clean = table(copies=None).generate()
    assert clean.to_dict("list") == {
        "id": [1, 2, 3],
        "name": ["n1", "n2", "n3"],
        "amount": [10, 20, 30],
    }
    assert dirty.to_dict("list") == {
        "id": [1, 2, 3],
        "name": ["N1", "N2", "N3"],
        "amount": ["10", "20", "30"],
    }
    assert [str(t) for t in dirty.dtypes] == ["int64", "str", "str"]
    assert [str(t) for t in clean.dtypes] == ["int64", "str", "int64"]


def test_the_draw_order_lets_a_column_draw_from_one_declared_after_it() -> None:
    draws = iter([5, 6])
    columns = (
        Column("double", lambda row: row["base"] * 2, dtype="typed", typed_export=True),
        Column("base", lambda row: next(draws), dtype="typed", typed_export=True),
    )
    _, clean = Table(random.Random(0), 2, columns, draw_order=("base", COLUMNS)).generate()
    assert clean.to_dict("list") == {"double": [10, 12], "base": [5, 6]}


def test_the_dirt_order_is_the_order_cells_are_dirtied_in() -> None:
    calls: list[str] = []
    columns = (
        Column("a", lambda row: 1, dirt=lambda row: calls.append("a") or 1, dtype="typed"),
        Column("b", lambda row: 2, dirt=lambda row: calls.append("b") or 2, dtype="typed"),
    )
    dirty, _ = Table(random.Random(0), 2, columns, dirt_order=("b", COLUMNS)).generate()
    assert calls == ["b", "a", "b", "a"]
    assert list(dirty.columns) == ["a", "b"]


@pytest.mark.parametrize("exact", [True, False])
def test_copies_join_the_shuffled_export_and_gold_keeps_only_kept_rows(exact: bool) -> None:
    made = table(copies=Copies(2, exact=exact, key="id"), kept=lambda row: row["id"] != 2)
    dirty, clean = made.generate()
    assert len(dirty) == 5
    assert len(dirty.drop_duplicates()) == 3  # each copy repeats one of the three rows
    assert sorted(set(dirty["id"])) == [1, 2, 3]
    assert clean["id"].tolist() == [1, 3]


@pytest.mark.parametrize("family", sorted(MODULES))
def test_every_step_of_a_family_solution_is_on_its_menu(family: str) -> None:
    module = MODULES[family]
    for seed in range(3):
        made = module.generate(random.Random(f"{family}:{seed}"))
        steps = [
            inner
            for step in made.reference_plan
            for inner in (
                step["parameters"]["operations"] if step["operation"] == "program" else [step]
            )
        ]
        assert {step["operation"] for step in steps} <= set(module.OPERATIONS)
