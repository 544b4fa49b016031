"""Rule cards in many phrasings: what a generated instance tells the agent, and how.

Each kind of rule has *plain* phrasings (the cue phrases the rule-card reader of the
heuristic agent knows) and *varied* ones (the same rule said as people write it). Easy
instances use plain phrasings only; medium instances mix them; hard instances are mostly
varied, and leave some rules to the data: a date order that only days above 12 reveal, or
spelling variants that only their low frequency gives away (`Card.leaves_to_data`).
Sentences appear in a shuffled order from medium up, so no template can count on positions.
"""

from __future__ import annotations

import random

from dataclean_env.table.values import Kind

# kind -> (plain phrasings, varied phrasings); fields in braces are filled per rule.
PHRASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "title": (
        ("{col} trimmed and in Title Case", "{col} in Title Case"),
        (
            "capitalise every word of {col}",
            "{col} should read like 'Ana Silva' whatever case it was typed in",
            "proper-case the {col} values",
        ),
    ),
    "upper": (
        ("{col} trimmed and in UPPER CASE", "{col} in UPPER CASE"),
        (
            "{col} is stored in capitals only",
            "write every {col} all in capital letters",
        ),
    ),
    "lower": (
        ("{col} trimmed and lower case", "{col} in lower case"),
        (
            "{col} must not contain capital letters",
            "write every {col} in small letters",
            "{col} values are case-insensitive: store them all-small",
        ),
    ),
    "phone": (
        ("{col} written {fmt}", "{col} in the form {fmt}"),
        (
            "{col} follows this company's pattern, for example {example}",
            "every {col} should look like {example}",
        ),
    ),
    "aliases": (
        ("{col} spelled out in full — in this export {mapping}", "{col} values: {mapping}"),
        (
            "some {col} entries use other spellings ({mapping_varied}); use the standard ones",
            "{col}: bring {mapping_varied} back to the standard name",
        ),
    ),
    "aliases_from_data": (
        ("{col} spelled out in full, one of {values}",),
        (
            "a few {col} entries are misspelt or abbreviated variants of the usual names: "
            "bring them back",
            "{col} should hold only the standard names; rarer variant spellings crept in",
        ),
    ),
    "tokens_missing": (
        ("{col} tokens {tokens} mean missing (leave it empty)",),
        (
            "in {col}, {tokens_varied} are placeholders for 'no value': empty them",
            "{col} cells reading {tokens_varied} hold nothing and should be blank",
        ),
    ),
    "tokens_value": (
        ("{col} tokens {tokens} mean {value}",),
        (
            "in {col}, {tokens_varied} stand for {value_varied}",
            "{col} placeholders ({tokens_varied}) should read {value_varied}",
        ),
    ),
    "dates": (
        (
            "{col} as {target} — {written} dates are {order}",
            "{col} {target}; {written} dates here are {order}",
        ),
        (
            "{col} becomes {target_varied}; the export wrote {written} dates {order_varied}",
            "{col} must be {target_varied} (the {written} ones were typed {order_varied})",
        ),
    ),
    "dates_from_data": (
        ("{col} as {target} — {written} dates follow this export's own day/month order",),
        (
            "{col} becomes {target_varied}; which part of a {written} date is the day is for "
            "you to work out",
            "{col} must be {target_varied}; {written} dates keep one day/month order throughout",
        ),
    ),
    "cast": (
        ("{col} {a_kind}", "cast {col} to {kind}"),
        (
            "{col} holds {kind_varied}",
            "{col} should be stored as {kind_varied}",
        ),
    ),
    "numbers": (
        ("numbers are written {style}",),
        ("amounts and counts were exported {style_varied}",),
    ),
    "bool": (
        ("{col} a bool (written '{yes}'/'{no}')",),
        (
            "{col} is a yes/no flag (the export says '{yes}' and '{no}')",
            "store {col} as true/false; '{yes}' is true and '{no}' is false",
        ),
    ),
    "within": (
        ("{col} an int within {low}..{high} — values outside are entry errors: clamp them",),
        (
            "{col} is a whole number no lower than {low} and no higher than {high}; pull "
            "impossible entries to the nearest bound",
        ),
    ),
    "keep_text": (
        ("{col} stays text (leading zeros matter)",),
        ("{col} is an identifier, not a number: '00501' must keep its zeros",),
    ),
    "trimmed": (
        ("{col} trimmed",),
        ("{col} values carry stray spaces around them", "no leading or trailing blanks in {col}"),
    ),
    "floor0_int": (
        (
            "{col} an int — negative counts are scanner misreads of empty shelves: clamp to at "
            "least 0 (0 is real)",
        ),
        ("{col} is a whole count; a count below zero is a misread empty shelf (so 0)",),
    ),
    "floor0": (
        ("{col} a float that cannot be negative: clamp negatives to 0 (0 is real)",),
        ("{col} is a float and below zero makes no sense there: raise those to 0 (0 is real)",),
    ),
    "cap": (
        (
            "{col} a float — a few were typed with three extra zeros: clamp {col} to at most "
            "{high} (and at least 0)",
        ),
        (
            "{col} is a float; nothing costs more than {high} — bigger values are typing "
            "slips that should become {high}",
        ),
    ),
    "dedupe_key": (
        ("some rows repeat with small differences: keep one row per {key}",),
        (
            "a few records were entered twice with small differences; {key} must be unique",
            "duplicated {key} values are the same record twice: keep the first",
        ),
    ),
    "exact_duplicates": (
        ("some rows are exact duplicates: drop them",),
        ("identical rows were exported more than once",),
    ),
    "fd": (
        ("each {key} has one {col}: repair the ones that disagree",),
        ("a {key} always belongs to the same {col}; a few rows spell it differently",),
    ),
    "test_records": (
        ("rows whose {col} is at {domain} are test records: drop them (drop_rows)",),
        ("anything with a {col} at {domain} is a test entry and must go",),
    ),
    "century": (
        ("{col} dates in the future are century typos (21xx for 20xx)",),
        ("a 21xx year in {col} is a slip for 20xx",),
    ),
    "particles": (
        ("names with particles (van, de, da, Mc) keep their own casing",),
        ("surnames like 'van Dijk' or 'McKay' are already right as written",),
    ),
    "zero_real": (("0 is a real {col} value",), ("a {col} of 0 is genuine",)),
}
INFERABLE = ("dates", "aliases")  # kinds a hard card may leave for the data to show

# Varied renderings of field values, so the varied phrasings do not carry the plain cues.
KIND_WORDS = {
    Kind.INT: "whole numbers",
    Kind.FLOAT: "decimal numbers",
    Kind.BOOL: "true/false flags",
    Kind.DATETIME: "a date type",
}
TARGET_PLAIN = {"text": "ISO text", "datetime": "a datetime"}
TARGET_VARIED = {"text": "YYYY-MM-DD text", "datetime": "a real date column"}
ORDER_PLAIN = {"us": "month first (US)", "eu": "day first (EU)"}
ORDER_VARIED = {"us": "with the month before the day", "eu": "with the day before the month"}
STYLE_PLAIN = {
    "us": "US style",
    "eu": "EU style",
    "fr": "French style",
    "ch": "Swiss style",
    "plain": "plain",
}
STYLE_VARIED = {
    "us": "with comma thousands and a dollar sign",
    "eu": "the continental way, with dot thousands, a decimal comma and a euro sign",
    "fr": "the French way, with spaces between thousands and a decimal comma",
    "ch": "the Swiss way, with apostrophes between thousands",
    "plain": "as bare digits",
}
LEVELS = ("easy", "medium", "hard")
VARIED_SHARE = {"easy": 0.0, "medium": 0.3, "hard": 0.45}
LEFT_TO_DATA = {"easy": 0.0, "medium": 0.0, "hard": 0.6}


class Card:
    """The rule sentences of one instance, phrased for its difficulty."""

    def __init__(self, rng: random.Random, difficulty: str):
        self.rng = rng
        self.difficulty = difficulty
        self.sentences: list[str] = []

    def leaves_to_data(self, kind: str) -> bool:
        """Whether this instance leaves a rule of `kind` for the agent to infer."""
        return kind in INFERABLE and self.rng.random() < LEFT_TO_DATA[self.difficulty]

    def state(self, rule: str, **fields: str) -> None:
        plain, varied = PHRASES[rule]
        phrasings = varied if self.rng.random() < VARIED_SHARE[self.difficulty] else plain
        self.sentences.append(self.rng.choice(phrasings).format(**fields))

    def text(self, opening: str, closing: str) -> str:
        sentences = list(self.sentences)
        if self.difficulty != "easy":
            self.rng.shuffle(sentences)
        return f"{opening} Rules for this export: {'; '.join(sentences)}. {closing}"


def quoted(values: list[str]) -> str:
    """['a', 'b'] -> "'a', 'b'" for the varied phrasings (no Python list syntax)."""
    return ", ".join(f"'{v}'" for v in values)
