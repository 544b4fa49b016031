"""Per-column repair rules learned from labelled rows, each applied as one SQL expression.

A labelled row pairs a row's dirty cells (as the table shows them) with the clean values
its `label` revealed. Every wrong labelled cell proposes candidate rules for its column:

* `Fill`: an empty cell becomes a constant (the column's own null convention, e.g. `-1`);
* `Replace`: one exact value becomes another (a recurring typo or token);
* `Reorder`: a cell of digit groups and separators (`4/2/15`) has its groups permuted and
  each written as an integer or zero-padded to two digits (`2/15/04`).

A candidate is kept only if, on all labelled rows, it fixes more cells than it breaks: the
labels are the only evidence of what is right, and a wrong change costs as much as a right
one earns. All of a column's kept rules become one `CASE` in one `UPDATE`, so each cell is
rewritten at most once, by the first rule whose condition it meets, as `apply` does.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Protocol

EMPTY = ""  # a missing cell, as the rules see it
MAX_GROUP_DIGITS = 9  # a digit group this long still fits a BIGINT cast in SQL
MAX_GROUPS = 4
_GROUP = re.compile(r"\d+")
FORMATS = ("int", "pad2")
SUPPORT = 2  # labelled cells a rule must fix (one may be a coincidence)
RARE = 3  # cells of a value a replacement seen once may still rewrite


class Rule(Protocol):
    def apply(self, value: str) -> str | None:
        """The rewritten value, or None when the rule does not touch this cell."""

    def sql_case(self, column: str) -> str:
        """`WHEN <condition> THEN <value>` over the quoted column."""


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def as_text(column: str) -> str:
    return f"CAST({quoted(column)} AS VARCHAR)"


@dataclass(frozen=True)
class Fill:
    value: str

    def apply(self, value: str) -> str | None:
        return self.value if value == EMPTY else None

    def sql_case(self, column: str) -> str:
        return f"WHEN {quoted(column)} IS NULL THEN {literal(self.value)}"


@dataclass(frozen=True)
class Replace:
    """`old` becomes `new`; a `rare` replacement (one label showed it) only where `old`
    fills at most `RARE` cells of the column, so a wrong one costs little."""

    old: str
    new: str
    rare: bool = False

    def apply(self, value: str) -> str | None:
        return self.new if value == self.old else None

    def sql_case(self, column: str) -> str:
        target = "NULL" if self.new == EMPTY else literal(self.new)
        match = f"{as_text(column)} = {literal(self.old)}"
        if self.rare:
            match += f" AND (SELECT count(*) FROM t WHERE {match}) <= {RARE}"
        return f"WHEN {match} THEN {target}"


@dataclass(frozen=True)
class Reorder:
    """Cells made of digit groups between the separators `source` (exactly) are rewritten
    as groups `order[i]` in `formats[i]`, between the separators `target`."""

    source: tuple[str, ...]
    target: tuple[str, ...]
    order: tuple[int, ...]
    formats: tuple[str, ...]

    def pattern(self) -> str:
        group = rf"(\d{{1,{MAX_GROUP_DIGITS}}})"
        return "^" + group.join(re.escape(s) for s in self.source) + "$"

    def apply(self, value: str) -> str | None:
        found = re.fullmatch(self.pattern(), value)
        if not found:
            return None
        groups = found.groups()
        parts = [_format(groups[i], f) for i, f in zip(self.order, self.formats, strict=True)]
        return _join(self.target, parts)

    def sql_case(self, column: str) -> str:
        text, pattern = as_text(column), literal(self.pattern())
        parts = []
        for i, fmt in zip(self.order, self.formats, strict=True):
            number = f"CAST(regexp_extract({text}, {pattern}, {i + 1}) AS BIGINT)"
            parts.append(
                f"printf('%02d', {number})" if fmt == "pad2" else f"CAST({number} AS VARCHAR)"
            )
        pieces = [literal(s) for s in self.target]
        joined = [p for pair in itertools.zip_longest(pieces, parts) for p in pair if p]
        return f"WHEN regexp_full_match({text}, {pattern}) THEN concat({', '.join(joined)})"


def _format(group: str, fmt: str) -> str:
    return f"{int(group):02d}" if fmt == "pad2" else str(int(group))


def _join(separators: tuple[str, ...], parts: list[str]) -> str:
    return separators[0] + "".join(p + s for p, s in zip(parts, separators[1:], strict=True))


def _shape(value: str) -> tuple[tuple[str, ...], list[str]] | None:
    groups = _GROUP.findall(value)
    if not 2 <= len(groups) <= MAX_GROUPS or any(len(g) > MAX_GROUP_DIGITS for g in groups):
        return None
    return tuple(_GROUP.split(value)), groups


def candidates(dirty: str, clean: str) -> list[Rule]:
    """The rules that would turn this wrong cell into its clean value."""
    found: list[Rule] = [Fill(clean)] if dirty == EMPTY else [Replace(dirty, clean)]
    source, target = _shape(dirty), _shape(clean)
    if source and target and len(source[1]) == len(target[1]):
        groups = source[1]
        for order in itertools.permutations(range(len(groups))):
            for formats in itertools.product(FORMATS, repeat=len(groups)):
                rule = Reorder(source[0], target[0], order, formats)
                if rule.apply(dirty) == clean:
                    found.append(rule)
    return found


@dataclass(frozen=True)
class Scored:
    rule: Rule
    fixed: int
    broken: int


def score(rule: Rule, pairs: list[tuple[str, str]]) -> Scored:
    fixed = broken = 0
    for dirty, clean in pairs:
        new = rule.apply(dirty)
        if new is None or new == dirty:
            continue
        if new == clean:
            fixed += 1
        elif dirty == clean:
            broken += 1
    return Scored(rule, fixed, broken)


def learn_column(pairs: list[tuple[str, str]]) -> list[Rule]:
    """The rules kept for one column from its labelled (dirty, clean) cells: per kind of
    rule (fill, each replaced value, each digit-group shape) the candidate with the best
    fixed minus broken, kept when it fixes more than it breaks and at least `SUPPORT` cells
    (a replacement fixing one is kept as `rare`); a replacement a general rule already
    makes is left out."""
    proposed: dict[str, Rule] = {}
    for dirty, clean in pairs:
        if dirty != clean:
            for rule in candidates(dirty, clean):
                proposed.setdefault(repr(rule), rule)
    best: dict[Any, Scored] = {}
    for name in sorted(proposed):
        scored = score(proposed[name], pairs)
        slot = _slot(scored.rule)
        held = best.get(slot)
        if scored.fixed > scored.broken and (
            held is None or scored.fixed - scored.broken > held.fixed - held.broken
        ):
            best[slot] = scored
    best = {
        slot: held if held.fixed >= SUPPORT else Scored(_rare(held.rule), held.fixed, held.broken)
        for slot, held in best.items()
        if held.fixed >= SUPPORT or isinstance(held.rule, Replace)
    }
    general = [held.rule for slot, held in best.items() if slot[0] != "replace"]
    kept = [
        held.rule
        for slot, held in best.items()
        if not isinstance(held.rule, Replace)
        or not any(rule.apply(held.rule.old) == held.rule.new for rule in general)
    ]
    # exact replacements first: a mapped value is not rewritten again by a pattern
    return sorted(kept, key=lambda rule: (not isinstance(rule, Replace), repr(rule)))


def _rare(rule: Rule) -> Rule:
    return Replace(rule.old, rule.new, rare=True) if isinstance(rule, Replace) else rule


def _slot(rule: Rule) -> tuple[str, Any]:
    if isinstance(rule, Replace):
        return ("replace", rule.old)
    if isinstance(rule, Reorder):
        return ("reorder", rule.source)
    return ("fill", None)


def update_statement(column: str, rules: list[Rule]) -> str:
    cases = " ".join(rule.sql_case(column) for rule in rules)
    return f"UPDATE t SET {quoted(column)} = CASE {cases} ELSE {quoted(column)} END"
