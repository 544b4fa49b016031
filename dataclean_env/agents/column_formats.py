"""Format normalisation learned from a column's own majority, one `UPDATE` per column.

* Spelling variants: values that differ only in letter case or in runs of whitespace are
  one value spelt several ways; a spelling at least `VARIANT_RATIO` times rarer than the
  class's most common one takes it (two spellings about as common may both be right).
* Units: in a numeric column, a cell `UNIT` times too large (at least `SCALE_GAP` times its
  column's bulk, and inside the bulk once divided) was written in the smaller unit: it is
  divided back (a whole result written as an integer, as a text column of numbers does). The bulk is the column's `BULK` quantiles, so errors in a few percent of
  its cells do not move it.
"""

from __future__ import annotations

from dataclean_env.agents.repair_rules import as_text, quoted

VARIANT_RATIO = 10
UNIT = 1000
SCALE_GAP = 100
BULK = (0.1, 0.9)


def _normal(text: str) -> str:
    return f"lower(regexp_replace(trim({text}), '\\s+', ' ', 'g'))"


def variant_statement(column: str) -> str:
    """The column's rare spellings take their class's most common spelling."""
    text = as_text(column)
    counts = f"SELECT {text} AS v, count(*) AS n FROM t WHERE {quoted(column)} IS NOT NULL GROUP BY v"
    classes = (
        f"SELECT {_normal('v')} AS norm, arg_max(v, n) AS top, max(n) AS most FROM ({counts}) "
        f"GROUP BY norm HAVING count(*) > 1"
    )
    return (
        f"UPDATE t SET {quoted(column)} = m.top FROM ({classes}) AS m, ({counts}) AS c "
        f"WHERE {_normal(text)} = m.norm AND {text} = c.v AND c.v <> m.top "
        f"AND c.n * {VARIANT_RATIO} <= m.most"
    )


def unit_statement(column: str) -> str:
    """The column's cells written `UNIT` times too large are divided back."""
    x = f"TRY_CAST({as_text(column)} AS DOUBLE)"
    low, high = BULK
    bulk = (
        f"SELECT quantile_cont({x}, {low}) AS lo, quantile_cont({x}, {high}) AS hi, "
        f"count({x}) AS numbers, count({quoted(column)}) AS filled FROM t"
    )
    return (
        f"UPDATE t SET {quoted(column)} = CASE WHEN {x} % {UNIT} = 0 "
        f"THEN CAST(CAST({x} / {UNIT} AS BIGINT) AS VARCHAR) ELSE CAST({x} / {UNIT} AS VARCHAR) END "
        f"FROM ({bulk}) AS b "
        f"WHERE b.numbers = b.filled AND b.lo < b.hi "
        f"AND abs({x}) >= {SCALE_GAP} * greatest(abs(b.lo), abs(b.hi)) "
        f"AND {x} / {UNIT} BETWEEN b.lo AND b.hi"
    )
