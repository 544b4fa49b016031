"""Names other people read on the board (submitter, model): one form per look-alike.

A name is NFKC-normalised (full-width, ligatures and composed accents fold to one form) and
trimmed, then refused if it is empty, too long, or holds a character that is invisible or
reorders the text around it: control and format characters (bidi overrides and isolates,
zero-width spaces and joiners, soft hyphens), and surrogates, private-use and unassigned code
points, which render as nothing anyone can compare.
"""

from __future__ import annotations

import unicodedata

from dataclean_env.errors import InvalidName

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
NAME_LENGTH = 64  # characters of a submitter's name, once normalised
MODEL_LENGTH = 128  # characters of a model's name, once normalised
RAW_FACTOR = 4  # combining marks compose, so a raw name may be longer than its shown form


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
        category = unicodedata.category(char)
        if category in HIDDEN_CATEGORIES:
            raise InvalidName(
                f"{field}: U+{ord(char):04X} ({category}) is invisible or reorders text; "
                "names hold printable characters only"
            )
    return name
