"""What one step may cost and leave behind: engine time, cell and table text, action size.

Every door shares these limits because they are checked by the engine (`Episode.step` and
the operations), not by a route. A step past a limit is refused with a typed error and
changes nothing. Defaults come from `dataclean_env.settings` (DCE_STEP_SECONDS, ...).
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import filterfalse
from typing import Any, NoReturn

from dataclean_env.errors import InvalidParameters, InvalidText, StepTimeLimit, TooLarge
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import Kind


@dataclass(frozen=True)
class EngineLimits:
    step_seconds: float = 2.0
    max_cell_chars: int = 1_000
    max_table_chars: int = 500_000
    max_action_bytes: int = 262_144
    max_history_bytes: int = 1_048_576

    def deadline(self) -> float:
        """The monotonic time by which a step starting now must be done."""
        return time.monotonic() + self.step_seconds


@lru_cache(maxsize=1)
def default_limits() -> EngineLimits:
    from dataclean_env.settings import get_settings  # read once, when the first episode starts

    s = get_settings()
    return EngineLimits(
        s.step_seconds,
        s.max_cell_chars,
        s.max_table_chars,
        s.max_action_bytes,
        s.max_history_bytes,
    )


def untimed_limits() -> EngineLimits:
    """The engine's limits without its per-step time limit, for measurements (anchors,
    baselines, the suite's interval): a score is a property of the instance and the agent,
    not of how busy the machine is. Under load a large plan step (a real table's `set_cell`
    program) can pass the time limit and be refused; the report must not move with load."""
    return replace(default_limits(), step_seconds=math.inf)


def remaining(deadline: float | None) -> float | None:
    """Seconds left before `deadline` (None: no deadline); StepTimeLimit once it has passed."""
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise_time_limit()
    return left


def raise_time_limit() -> NoReturn:
    raise StepTimeLimit(
        "the step took longer than its engine time limit and was refused; nothing changed "
        "(simplify the pattern or split the program)"
    )


def check_parameters(
    parameters: dict[str, Any], limits: EngineLimits, kept: int = 0, max_history: int | None = None
) -> tuple[str, int]:
    """An action's parameters are kept in the history: bound their size, and with the `kept`
    bytes of the steps before, the history's (`max_history`, default the limits'); refuse
    bad text, and integers no float holds. Gives their JSON text and its size in bytes."""
    history_limit = limits.max_history_bytes if max_history is None else max_history
    text = json.dumps(parameters, ensure_ascii=False)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidText("the parameters hold text that is not valid Unicode") from None
    if size > limits.max_action_bytes:
        raise TooLarge(
            f"the parameters take {size} bytes as JSON; at most {limits.max_action_bytes}"
        )
    if kept + size > history_limit:
        raise TooLarge(
            f"the episode's history would hold {kept + size} bytes of parameters; at most "
            f"{history_limit} (reset to start a new episode)"
        )
    # JSON's integers have any size; past a float's (309 digits or more) pandas and math
    # raise OverflowError. Shorter text holds none.
    if len(text) > 308 and _huge_int(parameters):
        raise InvalidParameters(
            "the parameters hold an integer too large for a number: at most "
            f"{sys.float_info.max:.6g} in size"
        )
    return text, size


def _huge_int(value: Any) -> bool:
    """Whether `value` holds (nested in dicts and lists) an integer too large for a float."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, int) and abs(item) > sys.float_info.max:
            return True
    return False


def _text_chars(values: list[Any]) -> tuple[int, int]:
    """(total characters, longest cell) over the text cells of a column; InvalidText if
    one holds a lone surrogate (it could never be sent as JSON)."""
    types = set(map(type, values))  # one C pass; most columns are all text or none
    if str not in types:
        return 0, 0
    texts = values if len(types) == 1 else [v for v in values if v.__class__ is str]
    # Only text beyond ASCII can hold a surrogate: encode just those cells, not the column.
    wide = list(filterfalse(str.isascii, texts))
    if wide:
        try:
            "\x00".join(wide).encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidText("the result would hold text that is not valid Unicode") from None
    return sum(map(len, texts)), max(map(len, texts))


def _column_chars(snapshot: Snapshot, column: str) -> tuple[int, int]:
    # A column of numbers, booleans or dates (any kind but str) holds no text cell.
    if snapshot.kinds[column] != Kind.STR:
        return 0, 0
    return _text_chars(snapshot.values[column])


# A task whose table starts with more text than the limit allows may grow by half its
# starting text (repairs fill missing cells), and its history may hold this many bytes of
# parameters per cell: room to rewrite every cell with `set_cells`. A table within the
# limit (every bundled task) keeps the limits as they are set.
TABLE_GROWTH = 1.5
HISTORY_BYTES_PER_CELL = 64
# Larger openings share nothing: their episodes remember no step (`engine/step_memory.py`),
# their tasks keep no built opening (`tasks/registry.py`).
MAX_TABLE_CELLS = 20_000


class TableBudget:
    """The text a table holds, per column values list; `admit` checks the next table.

    A task's own data may exceed the limits (a custom dataset's long cells, a large table):
    a step may not make a cell longer than `max(limit, the longest the task started with)`.
    A table that starts within the text limit may not grow past it; one that starts beyond
    it may grow to TABLE_GROWTH times its starting text, and its episode's history may hold
    `max(limit, HISTORY_BYTES_PER_CELL x its cells)` bytes of parameters. Columns a step did not touch keep their list object in the next snapshot, so
    only changed columns are counted.
    """

    def __init__(self, limits: EngineLimits, snapshot: Snapshot):
        self.limits = limits
        self._chars = {id(v): _column_chars(snapshot, c) for c, v in snapshot.values.items()}
        start_total = sum(total for total, _ in self._chars.values())
        self.total = start_total  # characters of text in the table
        start_longest = max((longest for _, longest in self._chars.values()), default=0)
        self.max_cell = max(limits.max_cell_chars, start_longest)
        self.max_table, self.max_history = limits.max_table_chars, limits.max_history_bytes
        if start_total > limits.max_table_chars:
            self.max_table = math.ceil(TABLE_GROWTH * start_total)
            cells = snapshot.n_rows * len(snapshot.columns)
            self.max_history = max(self.max_history, HISTORY_BYTES_PER_CELL * cells)
        self._lists = list(snapshot.values.values())  # keeps the ids above valid

    def _edited_chars(self, snapshot: Snapshot, column: str) -> tuple[int, int] | None:
        """A column's (text, longest cell) from those of the list a step edited, by the
        cells it touched alone (the longest an upper bound: a shortened cell is not looked
        for), or None when not known."""
        edit = snapshot.edits.get(column)
        if edit is None or edit.after is not snapshot.values[column]:
            return None
        base = self._chars.get(id(edit.before))
        if base is None or snapshot.kinds[column] != Kind.STR:
            return None
        new_total, new_longest = _text_chars([edit.after[i] for i in edit.at])
        old_total, _ = _text_chars([edit.before[i] for i in edit.at])
        return base[0] + new_total - old_total, max(base[1], new_longest)

    def admit(self, snapshot: Snapshot) -> TableBudget:
        chars = {}
        for column, values in snapshot.values.items():
            known = self._chars.get(id(values))
            if known is None:
                known = self._edited_chars(snapshot, column) or _column_chars(snapshot, column)
                if known[1] > self.max_cell:
                    raise TooLarge(
                        f"a cell of {column!r} would hold {known[1]} characters; "
                        f"at most {self.max_cell}"
                    )
            chars[id(values)] = known
        total = sum(t for t, _ in chars.values())
        if total > self.max_table:
            raise TooLarge(
                f"the table would hold {total} characters of text; at most {self.max_table}"
            )
        nxt = object.__new__(TableBudget)
        nxt.limits, nxt.max_table, nxt.max_cell = self.limits, self.max_table, self.max_cell
        nxt.max_history = self.max_history
        nxt._chars, nxt._lists, nxt.total = chars, list(snapshot.values.values()), total
        return nxt
