"""Per-instance choices for one column: how its values are dirtied, what gold holds, the steps
that repair it, and the card sentence that says so.

Every choice is drawn per instance (which errors are present, the phone pattern, the date
order and target type, the number style, the boolean words, the null tokens and what they
mean, the variant spellings), so no fixed plan fits every instance: an agent has to read
the card and, on hard instances, the data.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections import Counter
from typing import Any, Literal

from dataclean_env.generation.card import (
    KIND_WORDS,
    ORDER_PLAIN,
    ORDER_VARIED,
    STYLE_PLAIN,
    STYLE_VARIED,
    TARGET_PLAIN,
    TARGET_VARIED,
    Card,
    quoted,
)
from dataclean_env.generation.noise import padded
from dataclean_env.generation.pools import FIRST_NAMES, LAST_NAMES
from dataclean_env.operations.formats import eu_number_steps
from dataclean_env.table.values import Kind

Action = dict[str, Any]

# Surnames that str.title() would break ("van Dijk" -> "Van Dijk", "McKay" -> "Mckay"): they
# are right as written and must survive a blanket Title Case.
PARTICLE_NAMES = (
    "van Dijk",
    "van der Berg",
    "de la Cruz",
    "da Silva",
    "McKay",
    "MacLeod",
    "DeLuca",
    "dos Santos",
)
PHONE_PATTERNS = {
    "paren": "(XXX) XXX-XXXX",
    "dash": "XXX-XXX-XXXX",
    "dots": "XXX.XXX.XXXX",
    "digits": "XXXXXXXXXX",
}
READABLE_BOOLS = (("yes", "no"), ("true", "false"), ("Y", "N"))
OTHER_BOOLS = (("on", "off"), ("ja", "nein"), ("✓", "✗"), ("+", "-"))
TOKEN_POOL = ("N/A", "null", "-", "", "?", "n/a", "none", "unknown", "--", "NaN", "missing")
SEPARATOR_WORDS = {"/": "slashed", ".": "dotted", "-": "dashed"}
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def act(operation: str, **parameters: Any) -> Action:
    return {"operation": operation, "parameters": parameters}


PRESENT = {"easy": 1.0, "medium": 0.75, "hard": 0.5}


def present(rng: random.Random, difficulty: str) -> bool:
    """Whether an optional error appears in this instance (always on easy ones)."""
    return rng.random() < PRESENT[difficulty]


# ── names ─────────────────────────────────────────────────────────────────
class Names:
    """Names with casing and padding noise; gold in Title Case or in UPPER CASE, per
    instance. From medium up, some surnames carry particles that Title Case would break:
    under a Title Case rule they arrive right (only padded) and must stay as they are."""

    def __init__(self, rng: random.Random, difficulty: str):
        self.rng = rng
        self.particles = difficulty != "easy"
        self.target = "upper" if rng.random() < 0.4 else "title"
        self.noisy = present(rng, difficulty)  # else the names arrive right
        self.pairs: list[tuple[str, str]] = []

    def draw(self) -> str:
        rng = self.rng
        if self.particles and rng.random() < 0.15:
            return f"{rng.choice(FIRST_NAMES)} {rng.choice(PARTICLE_NAMES)}"
        return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"

    def gold(self, name: str) -> str:
        return name.upper() if self.target == "upper" else name

    def render(self, name: str) -> str:
        if not self.noisy:
            return self.gold(name)
        if self.target == "upper":
            dirty = padded(self.rng, self.rng.choice([name, name.lower(), name.upper()]))
        else:
            variants = [v for v in (name.lower(), name.upper()) if v.title() == name]
            dirty = padded(self.rng, self.rng.choice([name, name, *variants]))
        self.pairs.append((dirty, name))
        return dirty

    def steps(self, column: str) -> list[Action]:
        if not self.noisy:
            return []
        if self.target == "upper":
            return [act("upper", column=column)]
        if not self.particles:
            return [act("title", column=column)]
        # Title Case would break the particle names: map each mis-cased spelling instead.
        mapping = {d.strip(): c for d, c in self.pairs if d.strip() != c}
        return [act("map", column=column, mapping=dict(sorted(mapping.items())))] if mapping else []

    def state(self, card: Card, column: str) -> None:
        card.state(self.target, col=column)
        if self.particles and self.target == "title":
            card.state("particles")


# ── phones ────────────────────────────────────────────────────────────────
def phone_in(pattern: str, digits: str) -> str:
    a, b, c = digits[:3], digits[3:6], digits[6:]
    return {
        "paren": f"({a}) {b}-{c}",
        "dash": f"{a}-{b}-{c}",
        "dots": f"{a}.{b}.{c}",
        "digits": digits,
    }[pattern]


class Phones:
    """Phones in five export formats; gold in this instance's own pattern."""

    def __init__(self, rng: random.Random, difficulty: str):
        self.rng = rng
        choices = ["paren", "dash"] if difficulty == "easy" else list(PHONE_PATTERNS)
        self.pattern = rng.choice(choices)

    def gold(self, digits: str) -> str:
        return phone_in(self.pattern, digits)

    def render(self, digits: str) -> str:
        a, b, c = digits[:3], digits[3:6], digits[6:]
        return self.rng.choice(
            [f"({a}) {b}-{c}", f"{a}-{b}-{c}", f"{a}.{b}.{c}", f"+1 {a} {b} {c}", digits]
        )

    def steps(self, column: str) -> list[Action]:
        steps = [act("phone_us", column=column)]
        if self.pattern != "paren":
            target = {"dash": r"\1-\2-\3", "dots": r"\1.\2.\3", "digits": r"\1\2\3"}
            steps.append(
                act(
                    "regex_replace",
                    column=column,
                    pattern=r"^\((\d{3})\) (\d{3})-(\d{4})$",
                    replacement=target[self.pattern],
                )
            )
        return steps

    def state(self, card: Card, column: str) -> None:
        card.state(
            "phone",
            col=column,
            fmt=PHONE_PATTERNS[self.pattern],
            example=phone_in(self.pattern, "5550104477"),
        )


# ── categories and their variant spellings ────────────────────────────────
def variant_spelling(rng: random.Random, value: str, taken: set[str]) -> str:
    """A one-off spelling of `value` as exports get them: a lost, doubled or swapped letter,
    an abbreviation, or the wrong case; never equal to a value in `taken`."""
    for _ in range(50):
        how = rng.choice(["drop", "double", "swap", "abbreviate", "lower", "upper"])
        at = rng.randrange(1, max(2, len(value) - 1))
        if how == "drop":
            variant = value[:at] + value[at + 1 :]
        elif how == "double":
            variant = value[:at] + value[at] + value[at:]
        elif how == "swap" and at + 1 < len(value):
            variant = value[:at] + value[at + 1] + value[at] + value[at + 2 :]
        elif how == "abbreviate":
            variant = value[: rng.randint(3, 4)].rstrip() + "."
        elif how == "lower":
            variant = value.lower()
        else:
            variant = value.upper()
        if variant.strip() == variant and variant not in taken and variant.lower() != "nan":
            return variant
    raise ValueError(f"no variant spelling for {value!r}")


class Aliases:
    """A category column where a few values also appear under one-off variant spellings.

    Stated on the card (easy, medium) or left to the data (hard, sometimes). A variant
    stands for every fourth occurrence of its value, so it is always rarer than the value
    itself: on hard instances that frequency is what gives it away."""

    def __init__(self, rng: random.Random, card: Card, canonical: list[str]):
        self.rng = rng
        self.canonical = list(canonical)
        how_many = {"easy": 2, "medium": rng.randint(1, 3), "hard": rng.randint(2, 4)}[
            card.difficulty
        ]
        taken = set(canonical)
        self.mapping: dict[str, str] = {}
        self.aliases_of: dict[str, list[str]] = {}
        # Hard exports may spell one value two ways (each still rarer than the value).
        spellings = 2 if card.difficulty == "hard" else 1
        for value in rng.sample(sorted(canonical), how_many):
            for _ in range(rng.randint(1, spellings)):
                alias = variant_spelling(rng, value, taken)
                taken.add(alias)
                self.mapping[alias] = value
                self.aliases_of.setdefault(value, []).append(alias)
        self.from_data = card.leaves_to_data("aliases")
        self.seen: Counter[str] = Counter()
        self.used: set[str] = set()

    def gold(self, value: str) -> str:
        return value

    def render(self, value: str) -> str:
        # Occurrences 1, 5, 9... take the first variant and 3, 7, 11... the second: the
        # value itself keeps at least half of its rows.
        occurrence = self.seen[value]
        self.seen[value] += 1
        aliases = self.aliases_of.get(value, [])
        slot = occurrence % 4
        if slot in (1, 3) and len(aliases) > slot // 2:
            alias = aliases[slot // 2]
            self.used.add(alias)
            return alias
        return value

    def steps(self, column: str) -> list[Action]:
        used = {a: v for a, v in self.mapping.items() if a in self.used}
        return [act("map", column=column, mapping=used)] if used else []

    def state(self, card: Card, column: str) -> None:
        if self.from_data:
            card.state("aliases_from_data", col=column, values=str(sorted(self.canonical)))
            return
        card.state(
            "aliases",
            col=column,
            mapping=", ".join(f"'{a}' means '{v}'" for a, v in self.mapping.items()),
            mapping_varied=", ".join(f"{a} for {v}" for a, v in self.mapping.items()),
        )


# ── null-like tokens ──────────────────────────────────────────────────────
class Tokens:
    """Placeholders for 'no value', drawn per instance; they mean missing or a stated value."""

    def __init__(self, rng: random.Random, meaning: str | None):
        self.rng = rng
        self.tokens = rng.sample(TOKEN_POOL, rng.randint(2, 4))
        self.meaning = meaning  # None: missing

    def render(self) -> str:
        return self.rng.choice(self.tokens)

    def steps(self, column: str) -> list[Action]:
        steps = [act("replace_missing", columns=[column], tokens=list(self.tokens))]
        if self.meaning is not None:
            steps.append(
                act("fill_missing", column=column, strategy="constant", value=self.meaning)
            )
        return steps

    def state(self, card: Card, column: str) -> None:
        tokens, varied = str(self.tokens), quoted(self.tokens)
        if self.meaning is None:
            card.state("tokens_missing", col=column, tokens=tokens, tokens_varied=varied)
        else:
            value = self.meaning if self.meaning.isdigit() else f"'{self.meaning}'"
            card.state(
                "tokens_value",
                col=column,
                tokens=tokens,
                tokens_varied=varied,
                value=value,
                value_varied=f"«{self.meaning}»",
            )


# ── dates ─────────────────────────────────────────────────────────────────
class Dates:
    """Dates as ISO, slashed in this instance's day/month order, or with a month name;
    gold is ISO text or a datetime column, per instance (or per family)."""

    def __init__(self, rng: random.Random, card: Card, targets: tuple[str, ...]):
        self.rng = rng
        self.convention = rng.choice(["us", "eu"])
        self.target = rng.choice(targets)
        # How day, month and year are separated where the order is ambiguous.
        self.separator = "/" if card.difficulty == "easy" else rng.choice("//.-")
        self.from_data = card.leaves_to_data("dates")
        self.unambiguous = 0  # slashed dates whose day is above 12: they show the order

    @property
    def dtype(self) -> Literal["text", "datetime"]:
        """How gold types the column: ISO text or a datetime."""
        return "datetime" if self.target == "datetime" else "text"

    def gold(self, day: dt.date) -> Any:
        return day.isoformat() if self.target == "text" else day

    def render(self, day: dt.date) -> str:
        draw = self.rng.random()
        if draw < 0.3:
            return day.isoformat()
        if draw < 0.4:
            return f"{MONTHS[day.month - 1]} {day.day:02d}, {day.year}"
        self.unambiguous += day.day > 12
        first, second = (day.month, day.day) if self.convention == "us" else (day.day, day.month)
        return f"{first:02d}{self.separator}{second:02d}{self.separator}{day.year}"

    def steps(self, column: str) -> list[Action]:
        steps = []
        if self.separator != "/":  # normalize_dates reads slashes: rewrite the others first
            steps.append(
                act(
                    "regex_replace",
                    column=column,
                    pattern=rf"^(\d\d){re.escape(self.separator)}(\d\d){re.escape(self.separator)}(\d{{4}})$",
                    replacement=r"\1/\2/\3",
                )
            )
        steps.append(act("normalize_dates", column=column, convention=self.convention))
        if self.target == "datetime":
            steps.append(act("fix_dtype", column=column, dtype="datetime"))
        return steps

    def state(self, card: Card, column: str) -> None:
        # A hard card leaves the order to the data only where the data shows it.
        fields = {
            "col": column,
            "written": SEPARATOR_WORDS[self.separator],
            "target": TARGET_PLAIN[self.target],
            "target_varied": TARGET_VARIED[self.target],
        }
        if self.from_data and self.unambiguous >= 2:
            card.state("dates_from_data", **fields)
        else:
            self.from_data = False
            card.state(
                "dates",
                **fields,
                order=ORDER_PLAIN[self.convention],
                order_varied=ORDER_VARIED[self.convention],
            )


# ── numbers and flags ─────────────────────────────────────────────────────
# style -> (currency before, currency after, thousands separator, decimal separator)
NUMBER_STYLES = {
    "us": ("$", "", ",", "."),
    "eu": ("", " €", ".", ","),
    "fr": ("", " €", " ", ","),
    "ch": ("CHF ", "", "'", "."),
    "plain": ("", "", "", "."),
}


def number_style(rng: random.Random) -> str:
    return rng.choice(sorted(NUMBER_STYLES))


def _grouped(text: str, style: str) -> str:
    """US-formatted digits ("1,234.50") in `style`'s separators."""
    _, _, thousands, decimal = NUMBER_STYLES[style]
    return text.replace(",", "\0").replace(".", decimal).replace("\0", thousands)


def money(value: float, style: str) -> str:
    """An amount as an export writes it: "$1,234.50", "1.234,50 €", "CHF 1'234.50"..."""
    before, after, _, _ = NUMBER_STYLES[style]
    sign = "-" if value < 0 else ""
    return f"{sign}{before}{_grouped(f'{abs(value):,.2f}', style)}{after}"


def count(value: int, style: str) -> str:
    """A whole number with thousands separators in the instance's style."""
    return _grouped(f"{value:,}", style)


def number_steps(column: str, style: str, kind: Kind) -> list[Action]:
    """fix_dtype reads US and plain numbers; other styles lose their separators first."""
    _, _, _, decimal = NUMBER_STYLES[style]
    if decimal == ",":
        steps = eu_number_steps(column)
    elif style in ("us", "plain"):
        steps = []
    else:
        steps = [act("regex_replace", column=column, pattern=r"[^0-9.-]", replacement="")]
    return [*steps, act("fix_dtype", column=column, dtype=kind.value)]


class Numbers:
    """A numeric column that arrives as text in the instance's number style, or (an error
    this instance may not have) already typed."""

    def __init__(self, rng: random.Random, difficulty: str, style: str, kind: Kind):
        self.as_text = present(rng, difficulty)
        self.style, self.kind = style, kind

    def render(self, value: float) -> Any:
        if not self.as_text:
            return value
        return (
            money(value, self.style) if self.kind == Kind.FLOAT else count(int(value), self.style)
        )

    def steps(self, column: str) -> list[Action]:
        return number_steps(column, self.style, self.kind) if self.as_text else []


def state_style(card: Card, style: str) -> None:
    _, _, thousands, decimal = NUMBER_STYLES[style]
    example = f"{count(1234, style)} and {money(1234.5, style)}"
    card.state(
        "numbers",
        style=f"{STYLE_PLAIN[style]} ({example}: thousands '{thousands}', decimals '{decimal}')",
        style_varied=STYLE_VARIED[style],
    )


def state_cast(card: Card, column: str, kind: Kind) -> None:
    a_kind = f"an {kind}" if kind == Kind.INT else f"a {kind}"
    card.state("cast", col=column, kind=kind, a_kind=a_kind, kind_varied=KIND_WORDS[kind])


class Flags:
    """Booleans written as a per-instance word pair; pairs fix_dtype cannot read need a map
    (hard instances always use such an export-specific pair)."""

    def __init__(self, rng: random.Random, difficulty: str):
        pool = {
            "easy": READABLE_BOOLS,
            "medium": READABLE_BOOLS + OTHER_BOOLS,
            "hard": OTHER_BOOLS,
        }[difficulty]
        self.yes, self.no = rng.choice(pool)

    def gold(self, value: bool) -> bool:
        return value

    def render(self, value: bool) -> str:
        return self.yes if value else self.no

    def steps(self, column: str) -> list[Action]:
        steps = []
        if (self.yes, self.no) not in READABLE_BOOLS:
            steps.append(act("map", column=column, mapping={self.yes: "true", self.no: "false"}))
        return [*steps, act("fix_dtype", column=column, dtype="bool")]

    def state(self, card: Card, column: str) -> None:
        card.state("bool", col=column, yes=self.yes, no=self.no)
