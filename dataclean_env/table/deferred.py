"""A table whose pandas DataFrame is built only when something asks for it.

On the small tables of the original tasks one pandas call (take, fillna, setting a column)
costs more than a whole step's Python work. The operations agents use most therefore work
from the snapshot (plain lists, `snapshot.py`) and describe their pandas work as a function
of the input table; the episode keeps that function and runs it when something needs the
DataFrame (an operation that works in pandas, `Episode.table`). The DataFrame built is the
one the operation would have built at once: the same code, run later or never.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeAlias

import pandas as pd

Build = Callable[[pd.DataFrame], pd.DataFrame]
# A table may be asked for from two threads at once (a page reading an episode's table
# while a step runs): one builds, the other waits for it.
_BUILDING = threading.Lock()


class Deferred:
    """`build(base)`, computed once, on first use; `base` may itself be deferred."""

    __slots__ = ("_base", "_build", "_frame")

    def __init__(self, base: Table, build: Build):
        self._base: Table | None = base
        self._build: Build | None = build
        self._frame: pd.DataFrame | None = None

    def frame(self) -> pd.DataFrame:
        if self._frame is None:
            with _BUILDING:
                self._build_chain()
        return self._frame  # type: ignore[return-value]

    def _build_chain(self) -> None:
        if self._frame is None:
            # Walk back to the nearest built table, then build forward (no recursion: an
            # episode may chain as many deferred steps as its budget allows).
            chain: list[Deferred] = []
            table: Table | None = self
            while isinstance(table, Deferred) and table._frame is None:
                chain.append(table)
                table = table._base
            frame = frame_of(table)  # type: ignore[arg-type]  # a built base ends the walk
            for link in reversed(chain):
                frame = link._build(frame)  # type: ignore[misc]
                link._frame, link._base, link._build = frame, None, None


Table: TypeAlias = "pd.DataFrame | Deferred"


def frame_of(table: Table) -> pd.DataFrame:
    """The DataFrame of a table, built now if it was deferred."""
    return table.frame() if isinstance(table, Deferred) else table


def derive(table: Table, build: Build) -> Deferred:
    """The table `build(table)` will give, not built yet."""
    return Deferred(table, build)
