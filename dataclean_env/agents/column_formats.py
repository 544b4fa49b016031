"""Format normalisation learned from a column's own majority, one `UPDATE` per column.

* Spelling variants: values that differ only in runs of whitespace, or also in letter
  case, are one value spelt several ways; a spelling at least `SPACING_RATIO` (whitespace)
  or `VARIANT_RATIO` (case) times rarer than the class's most common one takes it (two
  cases about as common may both be right: rayyan's `eng` and `ENG`).
* Units: in a numeric column, a cell `UNIT` times too large (at least `SCALE_GAP` times its
  column's bulk, and inside the bulk once divided; such cells are `SECOND_SCALE` of the
  column or more) was written in the smaller unit: it is
  divided back (a whole result written as an integer, as a text column of numbers does). The bulk is the column's `BULK` quantiles, so errors in a few percent of
  its cells do not move it.
"""

from __future__ import annotations

from collections.abc import Callable

from dataclean_env.agents.repair_rules import as_text, quoted

SPACING_RATIO = 2
VARIANT_RATIO = 30  # rayyan writes `ENG` in one cell of 20 `eng`: a convention, kept
UNIT = 1000
SCALE_GAP = 100
SECOND_SCALE = 0.02  # of the column's numbers: fewer is a stray value, not a unit
BULK = (0.1, 0.9)


def _spaced(text: str) -> str:
    return f"regexp_replace(trim({text}), '\\s+', ' ', 'g')"


def _cased(text: str) -> str:
    return f"lower({_spaced(text)})"


def variant_statements(column: str) -> list[str]:
    """The column's rare spellings take their class's most common spelling: runs of
    whitespace first (never a convention), then letter case."""
    return [
        _variant_statement(column, _spaced, SPACING_RATIO),
        _variant_statement(column, _cased, VARIANT_RATIO),
    ]


def _variant_statement(column: str, _normal: Callable[[str], str], ratio: int) -> str:
    text = as_text(column)
    counts = (
        f"SELECT {text} AS v, count(*) AS n FROM t WHERE {quoted(column)} IS NOT NULL GROUP BY v"
    )
    classes = (
        f"SELECT {_normal('v')} AS norm, arg_max(v, n) AS top, max(n) AS most FROM ({counts}) "
        f"GROUP BY norm HAVING count(*) > 1"
    )
    return (
        f"UPDATE t SET {quoted(column)} = m.top FROM ({classes}) AS m, ({counts}) AS c "
        f"WHERE {_normal(text)} = m.norm AND {text} = c.v AND c.v <> m.top "
        f"AND c.n * {ratio} <= m.most"
    )


def unit_statement(column: str) -> str:
    """The column's cells written `UNIT` times too large are divided back."""
    x = f"TRY_CAST({as_text(column)} AS DOUBLE)"
    low, high = BULK
    bulk = (
        f"SELECT quantile_cont({x}, {low}) AS lo, quantile_cont({x}, {high}) AS hi, "
        f"count({x}) AS numbers, count({quoted(column)}) AS filled FROM t"
    )
    scaled = (
        f"abs({x}) >= {SCALE_GAP} * greatest(abs(b.lo), abs(b.hi)) "
        f"AND {x} / {UNIT} BETWEEN b.lo AND b.hi"
    )
    return (
        f"UPDATE t SET {quoted(column)} = CASE WHEN {x} % {UNIT} = 0 "
        f"THEN CAST(CAST({x} / {UNIT} AS BIGINT) AS VARCHAR) ELSE CAST({x} / {UNIT} AS VARCHAR) END "
        f"FROM ({bulk}) AS b, (SELECT count(*) AS n FROM t, ({bulk}) AS b WHERE {scaled}) AS s "
        f"WHERE b.numbers = b.filled AND s.n >= {SECOND_SCALE} * b.numbers "
        f"AND {scaled}"
    )
