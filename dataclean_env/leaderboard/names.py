"""Names other people read on the board (submitter, model): one form per look-alike, by the
rules of Unicode's security mechanisms for identifiers (UTS #39), as ICU's spoof checker
(`USpoofChecker`, through PyICU) implements them.

A name is NFKC-normalised (full-width, ligatures and composed accents fold to one form) and
trimmed, then refused if it is empty, too long, or if a reader could not tell it from
another:

* a character that is invisible or reorders the text around it: control and format
  characters (bidi overrides and isolates, zero-width spaces and joiners, soft hyphens),
  surrogates, private-use and unassigned code points, and every default-ignorable code
  point (Hangul fillers U+3164 and U+1160, the combining grapheme joiner U+034F);
* a character outside UTS #39's identifier profile (`XID_Continue`: the letters, marks
  and digits of a script) other than printable ASCII, so a look-alike of ASCII punctuation
  (U+2010 for '-') or a blank symbol (U+2800) cannot stand in a name;
* no letter or digit at all (a name of fillers or punctuation only);
* what ICU's checker refuses: letters of several scripts beyond the "highly restrictive"
  level (one script, or Latin with Han and Hiragana/Katakana, Bopomofo or Hangul), such as
  "heuristic" with a Cyrillic U+0435 for its e, and digits of several numbering systems;
* a whole-script confusable: a name whose confusable skeleton is written in other scripts
  than the name, so the name reads as a string of another script (U+0430 U+04CF U+0456
  U+0441 U+0435, all Cyrillic, reads as the Latin "aiice"; Greek U+0391 U+0392 U+0395 as
  "ABE").

`skeleton` is ICU's UTS #39 skeleton: two names with one skeleton look alike, so a new
holder's name may not have the skeleton of another holder's (`tokens.refuse_look_alike`).
"""

from __future__ import annotations

import unicodedata
from functools import cache

import icu
import regex

from dataclean_env.errors import InvalidName

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
NAME_LENGTH = 64  # characters of a submitter's name, once normalised
MODEL_LENGTH = 128  # characters of a model's name, once normalised
RAW_FACTOR = 4  # combining marks compose, so a raw name may be longer than its shown form
IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")
IDENTIFIER = regex.compile(r"\p{XID_Continue}")
NEUTRAL_SCRIPTS = frozenset({"Zyyy", "Zinh"})  # Common and Inherited
# UTS #39 §5.1's augmented script sets: Han is written in Japanese, Korean and with
# Bopomofo, so a Katakana name whose skeleton is Han ("ロ" and "口") stays in its writing.
AUGMENTED = {
    "Hani": frozenset({"Hani", "Hanb", "Jpan", "Kore"}),
    "Hira": frozenset({"Hira", "Jpan"}),
    "Kana": frozenset({"Kana", "Jpan"}),
    "Hang": frozenset({"Hang", "Kore"}),
    "Bopo": frozenset({"Bopo", "Hanb"}),
}


def board_name(value: str, field: str, max_length: int) -> str:
    """`value` in its one shown form, or InvalidName saying why (`field: ...`)."""
    if len(value) > RAW_FACTOR * max_length:  # bounds the work before normalising
        raise InvalidName(f"{field}: at most {max_length} characters once normalised (NFKC)")
    name = unicodedata.normalize("NFKC", value).strip()
    if not name:
        raise InvalidName(f"{field}: must not be empty")
    if len(name) > max_length:
        raise InvalidName(f"{field}: at most {max_length} characters once normalised (NFKC)")
    for char in name:
        _check_char(char, field)
    if not any(char.isalnum() for char in name):
        raise InvalidName(f"{field}: must hold a letter or a digit")
    _check_scripts(name, field)
    return name


def skeleton(name: str) -> str:
    """UTS #39's confusable skeleton of `name` (ICU): names that look alike have one."""
    return str(_checker().getSkeleton(0, name))


def _check_char(char: str, field: str) -> None:
    category = unicodedata.category(char)
    if category in HIDDEN_CATEGORIES or IGNORABLE.match(char):
        raise InvalidName(
            f"{field}: U+{ord(char):04X} ({category}) is invisible or reorders text; "
            "names hold printable characters only"
        )
    if not (" " <= char <= "~") and not IDENTIFIER.match(char):
        raise InvalidName(
            f"{field}: U+{ord(char):04X} ({unicodedata.name(char, category)}) is a symbol or "
            "punctuation outside ASCII, which may pass for another; names hold letters, "
            "digits and ASCII punctuation"
        )


def _check_scripts(name: str, field: str) -> None:
    failed = _checker().check(name)
    if failed & icu.USpoofChecks.RESTRICTION_LEVEL:
        raise InvalidName(
            f"{field}: mixes the scripts {', '.join(sorted(n.upper() for n in _scripts(name).values()))}, so it may "
            "look like another name (Unicode UTS #39); write it in one script"
        )
    if failed & icu.USpoofChecks.MIXED_NUMBERS:
        raise InvalidName(f"{field}: mixes digits of several numbering systems (UTS #39)")
    written, read = _writings(name), _writings(skeleton(name))
    if written and read and not written & read:
        raise InvalidName(
            f"{field}: every letter looks like a letter of another script, so {name!r} reads "
            f"as {skeleton(name)!r} (a whole-script confusable, Unicode UTS #39); add a "
            "letter of its own script or write it in the script it reads as"
        )


def _scripts(text: str) -> dict[str, str]:
    """The scripts of `text`'s letters, short name to name (Common and Inherited left out)."""
    found = (icu.Script.getScript(char) for char in text)
    named = {script.getShortName(): script.getName() for script in found}
    return {short: name for short, name in named.items() if short not in NEUTRAL_SCRIPTS}


def _writings(text: str) -> set[str]:
    """The augmented scripts `text` is written in (Common and Inherited left out)."""
    return set().union(*(AUGMENTED.get(script, {script}) for script in _scripts(text)))


@cache
def _checker() -> icu.SpoofChecker:
    # check() and getSkeleton() read the checker only: one serves every thread.
    checker = icu.SpoofChecker()
    checker.setRestrictionLevel(icu.URestrictionLevel.HIGHLY_RESTRICTIVE)
    checker.setChecks(icu.USpoofChecks.RESTRICTION_LEVEL | icu.USpoofChecks.MIXED_NUMBERS)
    return checker
