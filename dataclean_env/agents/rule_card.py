"""Reading a task's rule card: the steps its description asks for, in pipeline order.

This is what the heuristic agent knows of a task: the description and the observation (its
columns, sample rows, operations), never the task id or gold. Each rule is found by a cue
phrase; the column a rule is about is the last column the card names before the cue.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from dataclean_env.operations.formats import eu_number_steps
from dataclean_env.table.values import NUMERIC_KINDS, Kind

ActionDict = dict[str, Any]  # an action envelope as JSON: {"operation", "parameters"}
NO_CEILING = 1e12


@dataclass
class CardPlan:
    steps: list[ActionDict] = field(default_factory=list)
    leave_empty: set[str] = field(default_factory=set)  # columns whose missing cells are right
    # (column, email domain): rows to find by scanning the table and drop by id.
    drop_matching: tuple[str, str] | None = None


def _mentions(description: str, columns: list[str]) -> list[tuple[int, str]]:
    """(end position, column) of every place the card names a column, in text order."""
    found = []
    for column in columns:
        spoken = re.escape(column.replace("_", " "))
        for match in re.finditer(rf"\b(?:{re.escape(column)}|{spoken})s?\b", description, re.I):
            found.append((match.end(), column))
    return sorted(found)


def read_card(
    description: str, columns: list[str], operations: set[str], key: str | None
) -> CardPlan:
    """The steps `description` asks for, limited to `operations`, never touching `key`."""
    mentions = _mentions(description, columns)

    def column_before(position: int) -> str | None:
        before = [c for end, c in mentions if end <= position]
        return before[-1] if before else None

    def cued(pattern: str) -> list[tuple[re.Match[str], str]]:
        hits = []
        for match in re.finditer(pattern, description):
            column = column_before(match.start())
            if column is not None and column != key:
                hits.append((match, column))
        return hits

    plan = CardPlan()
    stages: dict[str, list[ActionDict]] = {name: [] for name in STAGES}

    def add(stage: str, operation: str, **parameters: Any) -> None:
        if operation in operations:
            stages[stage].append({"operation": operation, "parameters": parameters})

    if "exact duplicate" in description:
        add("rows", "remove_duplicates")
    for match in re.finditer(r"one row per (\w+)", description):
        add("rows", "dedupe", keys=[match.group(1)])
    add("text", "strip")
    for _, column in cued(r"Title Case"):
        add("text", "title", column=column)
    for _, column in cued(r"UPPER CASE"):
        add("text", "upper", column=column)
    for _, column in cued(r"lower case"):
        add("text", "lower", column=column)
    for match, column in cued(_PHONE_PATTERN):
        add("text", "phone_us", column=column)
        if match.group(0) != "(XXX) XXX-XXXX":  # phone_us writes that; rewrite it
            add("text", "regex_replace", **_phone_rewrite(column, match.group(0)))
    aliases: dict[str, dict[str, str]] = {}
    for match, column in cued(r"'([^']+)' means '([^']+)'"):
        aliases.setdefault(column, {})[match.group(1)] = match.group(2)
    for column, mapping in aliases.items():
        add("values", "map", column=column, mapping=mapping)
    for match, column in cued(r"tokens (\[[^\]]*\]) mean (missing|'[^']*'|\d+)"):
        tokens = [str(t) for t in ast.literal_eval(match.group(1))]
        add("values", "replace_missing", columns=[column], tokens=tokens)
        meaning = match.group(2)
        if meaning == "missing":
            plan.leave_empty.add(column)
        else:
            value = meaning.strip("'")
            add("values", "fill_missing", column=column, strategy="constant", value=value)
    for match, column in cued(r"(slashed|dotted|dashed) dates[^;]*?\((US|EU)\)"):
        separator = {"slashed": "/", "dotted": ".", "dashed": "-"}[match.group(1)]
        if separator != "/":  # normalize_dates reads dd/dd/yyyy: put slashes in first
            sep = re.escape(separator)
            add(
                "dates",
                "regex_replace",
                column=column,
                pattern=rf"^(\d\d){sep}(\d\d){sep}(\d{{4}})$",
                replacement=r"\1/\2/\3",
            )
        add("dates", "normalize_dates", column=column, convention=match.group(2).lower())
    for _, column in cued(r"\(21xx for 20xx\)"):
        add("dates", "regex_replace", column=column, pattern=r"^21(\d\d)", replacement=r"20\1")
    separators = re.search(r"thousands '(.?)', decimals '(.)'", description)
    thousands, decimal = separators.groups() if separators else ("", ".")
    eu = "EU style" in description or decimal == ","
    other = not eu and thousands not in ("", ",")  # e.g. 1'234.50: drop the separators
    for match, column in cued(r"a bool \(written '([^']*)'/'([^']*)'\)"):
        yes, no = match.group(1), match.group(2)
        if not (readable_bool(yes) and readable_bool(no)):  # fix_dtype cannot read them
            add("values", "map", column=column, mapping={yes: "true", no: "false"})
    for match, column in cued(r"\b(?:an?|to) (int|float|bool|datetime)\b"):
        kind = Kind(match.group(1))
        if eu and kind in NUMERIC_KINDS:
            for step in eu_number_steps(column):
                add("numbers", step["operation"], **step["parameters"])
        if other and kind in NUMERIC_KINDS:
            add("numbers", "regex_replace", column=column, pattern=r"[^0-9.-]", replacement="")
        add("types", "fix_dtype", column=column, dtype=kind.value)
    for match, column in cued(r"within (-?\d+)\.\.(-?\d+)"):
        add(
            "limits",
            "clamp_outliers",
            column=column,
            low=int(match.group(1)),
            high=int(match.group(2)),
        )
    for match, column in cued(r"at most (\d+) \(and at least (-?\d+)\)"):
        add(
            "limits",
            "clamp_outliers",
            column=column,
            low=int(match.group(2)),
            high=int(match.group(1)),
        )
    for _, column in cued(r"clamp negatives to 0|clamp to at least 0"):
        add("limits", "clamp_outliers", column=column, low=0, high=NO_CEILING)
    for match in re.finditer(r"each (\w+) has one (\w+)", description):
        add("limits", "fd_repair", key=match.group(1), column=match.group(2))
    found = re.search(r"whose (\w+) is at ([\w.-]+) are test records", description)
    if found and {"show_rows", "drop_rows"} <= operations:
        plan.drop_matching = (found.group(1), found.group(2))
    plan.steps = [step for name in STAGES for step in stages[name]]
    return plan


# A phone pattern as cards write it: X for a digit, with the separators gold uses.
_PHONE_PATTERN = r"\(XXX\) XXX-XXXX|XXX([-. ])XXX\1XXXX|XXXXXXXXXX"


def _phone_rewrite(column: str, pattern: str) -> dict[str, Any]:
    """regex_replace parameters turning phone_us's (XXX) XXX-XXXX into `pattern`."""
    parts = re.fullmatch(r"(X{3})(.?)(X{3})(.?)(X{4})", pattern.replace("(XXX) ", "XXX "))
    separators = (parts.group(2), parts.group(4)) if parts else ("", "")
    replacement = rf"\1{separators[0]}\2{separators[1]}\3"
    return {
        "column": column,
        "pattern": r"^\((\d{3})\) (\d{3})-(\d{4})$",
        "replacement": replacement,
    }


def readable_bool(word: str) -> bool:
    return word.strip().lower() in ("true", "yes", "y", "t", "1", "false", "no", "n", "f", "0")


# The order the card's steps run in: rows first (so later steps touch fewer), text before
# values, dates and separators before the casts that need them, limits on typed columns.
STAGES = ("rows", "text", "values", "dates", "numbers", "types", "limits")
