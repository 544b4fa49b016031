"""Names other people read on the board (submitter, model): one form per look-alike, by the
rules of Unicode's security mechanisms for identifiers (UTS #39).

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
* letters of several scripts beyond UTS #39's "highly restrictive" level (one script, or
  Latin with Han and Hiragana/Katakana, Bopomofo or Hangul): "heuristic" with a Cyrillic U+0435 for its e.

`skeleton` is UTS #39's confusable skeleton, from its confusables data (the maintained
`confusable-homoglyphs` package): two names with one skeleton look alike, so a new holder's
name may not have the skeleton of another holder's (`tokens.look_alike`). Scripts come from
the same package; the default-ignorable and identifier properties from `regex`.
"""

from __future__ import annotations

import unicodedata
from functools import cache

import regex
from confusable_homoglyphs import categories, confusables

from dataclean_env.errors import InvalidName

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
NAME_LENGTH = 64  # characters of a submitter's name, once normalised
MODEL_LENGTH = 128  # characters of a model's name, once normalised
RAW_FACTOR = 4  # combining marks compose, so a raw name may be longer than its shown form
IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")
IDENTIFIER = regex.compile(r"\p{XID_Continue}")
NEUTRAL_SCRIPTS = frozenset({"COMMON", "INHERITED"})
# UTS #39 §5.2, "highly restrictive": the script sets a name may mix.
HIGHLY_RESTRICTIVE = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)


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
    found: set[str] = categories.unique_aliases(name)  # type: ignore[no-untyped-call]
    scripts = found - NEUTRAL_SCRIPTS
    if len(scripts) > 1 and not any(scripts <= allowed for allowed in HIGHLY_RESTRICTIVE):
        raise InvalidName(
            f"{field}: mixes the scripts {', '.join(sorted(scripts))}, so it may look like "
            "another name (Unicode UTS #39); write it in one script"
        )
    return name


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


def skeleton(name: str) -> str:
    """UTS #39's confusable skeleton of `name`: each character mapped to one member of its
    class of look-alikes, so names that look alike have one skeleton."""
    return "".join(_prototype(char) for char in unicodedata.normalize("NFD", name))


@cache
def _prototype(char: str) -> str:
    # A class of confusables is a prototype and the characters mapped to it: two steps
    # from any member reach all of them; its smallest code point stands for it.
    data = confusables.confusables_data
    near = {h["c"] for h in data.get(char, ()) if len(h["c"]) == 1}
    near |= {h["c"] for n in near for h in data.get(n, ()) if len(h["c"]) == 1}
    return min(near | {char})
