"""A generated family described as a per-column table, and the machinery that runs it.

Each column is declared once (`Column`): how its clean value is drawn, how the export dirties
it, what gold holds, the card sentences that state its rules and the steps that repair it.
Rules that span the table (duplicate rows, test records, a dependency between columns, a
blanket strip) are `TableRule`s. `Table.generate` derives from the declarations what every
generator used to wire by hand: the clean rows, their faults, the dirty rows and their
copies, both typed frames, the card and the plan.

A family's instances are frozen by its digest, so the table also records the order in which
the generator draws from its random stream (`draw_order`, `dirt_order`) and states and repairs
its rules (`card_order`, `plan_order`), where that order is not the columns' own. Each order
names columns and table rules; `COLUMNS` stands for every column the order does not name.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import pandas as pd

from dataclean_env.generation.card import Card
from dataclean_env.generation.noise import shuffled_with
from dataclean_env.generation.treatments import Action, act, state_style

Row = dict[str, Any]
COLUMNS = "*columns*"  # in an order: every column the order does not name, as declared


def each(values: Iterable[Any]) -> Callable[[Row], Any]:
    """A draw that hands out `values` (drawn up front, e.g. a sorted sample of keys) in turn."""
    remaining: Iterator[Any] = iter(values)
    return lambda row: next(remaining)


@dataclass(frozen=True)
class Column:
    """One column of a generated family.

    `draw` gets the row drawn so far, `dirt` and `gold` the clean row (after the faults).
    `dtype` types gold: text, as drawn ("typed": ints, floats, bools) or a datetime; the
    export holds text unless `typed_export` keeps the drawn type. `faults` picks, once every
    row is drawn, the rows whose cell the export gets wrong. `styled` columns are written in
    the family's number style, which the card states before the first of them."""

    name: str
    draw: Callable[[Row], Any]
    dirt: Callable[[Row], Any] | None = None  # None: exported as drawn
    gold: Callable[[Row], Any] | None = None  # None: gold is the drawn value
    dtype: Literal["text", "typed", "datetime"] = "text"
    typed_export: bool = False
    faults: Callable[[list[Row]], None] | None = None
    rules: Callable[[Card], None] | None = None
    repair: Callable[[], list[Action]] | None = None
    styled: bool = False


class Treatment(Protocol):
    """A column's per-instance dirt (see `treatments.py`): export, gold, card and repair."""

    def render(self, value: Any) -> Any: ...
    def gold(self, value: Any) -> Any: ...
    def state(self, card: Card, column: str) -> None: ...
    def steps(self, column: str) -> list[Action]: ...


def treated(
    name: str,
    draw: Callable[[Row], Any],
    treatment: Treatment,
    dtype: Literal["text", "typed", "datetime"] = "text",
) -> Column:
    """A column whose export, gold, rules and repair all come from one treatment."""
    return Column(
        name,
        draw,
        dirt=lambda row: treatment.render(row[name]),
        gold=lambda row: treatment.gold(row[name]),
        dtype=dtype,
        rules=lambda card: treatment.state(card, name),
        repair=lambda: treatment.steps(name),
    )


@dataclass(frozen=True)
class TableRule:
    """A rule over the whole table: its card sentences and its repair steps."""

    name: str
    rules: Callable[[Card], None] | None = None
    repair: Callable[[], list[Action]] | None = None


STRIP = TableRule("strip", repair=lambda: [act("strip")])  # every text cell trimmed


@dataclass(frozen=True)
class Copies:
    """Duplicate rows of the export, `count` of them (0: none in this instance): `exact` ones
    repeat a dirty row and are dropped whole; near ones render a clean row again (with fresh
    dirt) and one row per `key` is kept."""

    count: int
    exact: bool
    key: str

    def rule(self) -> TableRule:
        if not self.count:
            return TableRule("copies")
        if self.exact:
            return TableRule(
                "copies",
                lambda card: card.state("exact_duplicates"),
                lambda: [act("remove_duplicates")],
            )
        return TableRule(
            "copies",
            lambda card: card.state("dedupe_key", key=self.key),
            lambda: [act("dedupe", keys=[self.key])],
        )


@dataclass(frozen=True)
class Table:
    """A family's columns and table rules, and the random stream they draw from. The copies
    are a table rule named "copies"; orders default to the columns, then the table rules."""

    rng: random.Random
    rows: int
    columns: tuple[Column, ...]
    table_rules: tuple[TableRule, ...] = ()
    copies: Copies | None = None  # None: no copies and the rows keep their order
    style: str | None = None  # the number style of the `styled` columns
    kept: Callable[[Row], bool] | None = None  # which clean rows gold keeps (None: all)
    draw_order: tuple[str, ...] = (COLUMNS,)
    dirt_order: tuple[str, ...] = (COLUMNS,)
    card_order: tuple[str, ...] | None = None
    plan_order: tuple[str, ...] | None = None

    def generate(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(dirty, clean) frames, drawn from `rng` in the table's frozen order."""
        drawn, dirtied = self._columns_in(self.draw_order), self._columns_in(self.dirt_order)
        clean_rows = [self._clean_row(drawn) for _ in range(self.rows)]
        for column in self.columns:
            if column.faults is not None:
                column.faults(clean_rows)
        dirty_rows = [self._dirty_row(dirtied, row) for row in clean_rows]
        if self.copies is not None:
            copies = self._copies(self.copies, dirtied, clean_rows, dirty_rows)
            dirty_rows = shuffled_with(self.rng, dirty_rows, copies)
        return self._dirty_frame(dirty_rows), self._clean_frame(clean_rows)

    def state(self, card: Card) -> None:
        """The card's sentences: each column's and table rule's, in the card's order, with
        the number style stated before the first styled column when any arrives as text."""
        items = self._ordered(self.card_order)
        styled = [c for c in items if isinstance(c, Column) and c.styled]
        for item in items:
            if styled and item is styled[0] and not all(c.typed_export for c in styled):
                assert self.style is not None
                state_style(card, self.style)
            if item.rules is not None:
                item.rules(card)

    def plan(self) -> list[Action]:
        """The steps that repair the table: each column's and table rule's, in plan order."""
        return [
            step
            for item in self._ordered(self.plan_order)
            if item.repair is not None
            for step in item.repair()
        ]

    def _ordered(self, order: tuple[str, ...] | None) -> list[Column | TableRule]:
        items: dict[str, Column | TableRule] = {c.name: c for c in self.columns}
        rules = [*self.table_rules, *([self.copies.rule()] if self.copies else [])]
        items.update((rule.name, rule) for rule in rules)
        if order is None:
            order = (COLUMNS, *(rule.name for rule in rules))
        named = set(order)
        return [
            item
            for name in order
            for item in (
                [c for c in self.columns if c.name not in named]
                if name == COLUMNS
                else [items[name]]
            )
        ]

    def _columns_in(self, order: tuple[str, ...]) -> list[Column]:
        return [item for item in self._ordered(order) if isinstance(item, Column)]

    def _clean_row(self, drawn: list[Column]) -> Row:
        row: Row = {}
        for column in drawn:
            row[column.name] = column.draw(row)
        return {c.name: row[c.name] for c in self.columns}

    def _dirty_row(self, dirtied: list[Column], row: Row) -> Row:
        dirty = {c.name: c.dirt(row) if c.dirt else row[c.name] for c in dirtied}
        return {c.name: dirty[c.name] for c in self.columns}

    def _copies(
        self, copies: Copies, dirtied: list[Column], clean_rows: list[Row], dirty_rows: list[Row]
    ) -> list[Row]:
        if copies.exact:
            return [dict(row) for row in self.rng.sample(dirty_rows, copies.count)]
        return [self._dirty_row(dirtied, row) for row in self.rng.sample(clean_rows, copies.count)]

    def _dirty_frame(self, rows: list[Row]) -> pd.DataFrame:
        return _frame(
            {c.name: [row[c.name] for row in rows] for c in self.columns},
            {c.name: "typed" if c.typed_export else "text" for c in self.columns},
        )

    def _clean_frame(self, rows: list[Row]) -> pd.DataFrame:
        kept = [row for row in rows if self.kept is None or self.kept(row)]
        return _frame(
            {
                c.name: [c.gold(row) if c.gold else row[c.name] for row in kept]
                for c in self.columns
            },
            {c.name: c.dtype for c in self.columns},
        )


def _frame(
    columns: dict[str, list[Any]], dtypes: dict[str, Literal["text", "typed", "datetime"]]
) -> pd.DataFrame:
    """A frame of `columns` as text, as drawn (pandas infers the type) or as datetimes. Built
    from columns, and cast only where inference missed: several times faster than a frame of
    rows cast as a whole."""
    frame = pd.DataFrame(columns)
    for name, dtype in dtypes.items():
        if dtype == "text" and frame[name].dtype != "str":
            frame[name] = frame[name].astype("str")
        elif dtype == "datetime":
            frame[name] = pd.to_datetime(frame[name])
    return frame
