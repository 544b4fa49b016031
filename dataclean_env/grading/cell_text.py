"""Cells as the cell-repair grader compares them: as trimmed text (what a CSV writer would
put in the file), with the gold value of a declared kind read as that kind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from dataclean_env.table.values import (
    MISSING,
    NUMERIC_KINDS,
    Kind,
    json_cell,
    parse_bool,
    parse_date,
    parse_number,
)

ABSENT = None  # the text of a cell whose row is not in the table


def cell_text(value: Any) -> str:
    """The text a table cell stands for, trimmed: what a CSV writer would put in the file,
    except that a whole float reads as an integer (a number column with gaps is float)."""
    kind = type(value)
    if kind is str:
        text: str = value.strip()
        return text
    if value is MISSING:
        return ""
    if kind is int:
        return str(value)
    if kind is float:
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, pd.Timestamp):
        return str(json_cell(value))
    return str(value).strip()


def _clean_value(value: Any, kind: Kind | None, column: str) -> Any:
    text = "" if value is None or (isinstance(value, float) and value != value) else str(value)
    text = text.strip()
    if kind is None or kind == Kind.STR or text == "":
        return text
    parsed: Any
    if kind in NUMERIC_KINDS:
        parsed = parse_number(text)
    elif kind == Kind.BOOL:
        parsed = parse_bool(text)
    else:
        parsed = parse_date(text)
    if parsed is None:
        raise ValueError(f"the clean column {column!r} is declared {kind} but holds {text!r}")
    return parsed


_LOST = object()  # the cell of a row the table no longer holds


def _text_or_absent(value: Any) -> str | None:
    return ABSENT if value is _LOST else cell_text(value)


# Cell types whose equal values always have the same text, per snapshot kind (a column of
# one of these kinds holds one Python type, besides MISSING and _LOST, whose type is object).
_SENTINELS = frozenset({type(MISSING), object})
_SAME_TEXT_TYPES = {
    Kind.STR: _SENTINELS | {str},
    Kind.INT: _SENTINELS | {int},
    Kind.FLOAT: _SENTINELS | {float},
    Kind.BOOL: _SENTINELS | {bool},
    Kind.DATETIME: _SENTINELS | {pd.Timestamp},
}


def _texts(cells: Sequence[Any], kind: Kind) -> list[str | None]:
    """`_text_or_absent` of every cell, in C-level maps: trimmed when every cell is text,
    else through each distinct value once when equal cells are sure to read the same (one
    type per column; dates by object, since a snapshot shares one Timestamp among the
    cells of a date and hashing Timestamps is slow); cell by cell otherwise."""
    try:
        return list(map(str.strip, cells))
    except TypeError:  # a cell that is not text
        pass
    types = set(map(type, cells))
    if types <= _SENTINELS | {str}:
        return _texts_with_gaps(list(cells))
    if types <= _SAME_TEXT_TYPES.get(kind, _SENTINELS | {str}):
        if kind == Kind.DATETIME:
            ids = list(map(id, cells))
            by_id = dict(zip(ids, cells, strict=True))
            text_of_id = {i: _text_or_absent(v) for i, v in by_id.items()}
            return list(map(text_of_id.__getitem__, ids))
        text_of = {v: _text_or_absent(v) for v in set(cells)}
        return list(map(text_of.__getitem__, cells))
    return [
        v.strip() if type(v) is str else "" if v is MISSING else _text_or_absent(v) for v in cells
    ]


def _texts_with_gaps(cells: list[Any]) -> list[str | None]:
    """`_text_or_absent` of text cells among MISSING and _LOST ones: the gaps are found
    by C scans (`list.index`) and blanked, the rest trimmed in one map."""
    missing, lost = _indexes(cells, MISSING), _indexes(cells, _LOST)
    for position in missing + lost:
        cells[position] = ""
    try:
        texts: list[str | None] = list(map(str.strip, cells))
    except TypeError:  # some other object: cell by cell
        return [_text_or_absent(v) for v in cells]
    for position in lost:
        texts[position] = ABSENT
    return texts


def _indexes(cells: list[Any], marker: object) -> list[int]:
    """Where `marker` is in `cells` (text never equals a marker: they compare by identity)."""
    found, position = [], -1
    try:
        while True:
            position = cells.index(marker, position + 1)
            found.append(position)
    except ValueError:
        return found
