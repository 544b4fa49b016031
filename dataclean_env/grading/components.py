"""Reward components, each computed cell by cell (or row by row) against gold.

Every component counts the errors left in the agent's table and scores the share of the
dirty table's errors that are fixed: 1 - errors_now / errors_in_dirty, floored at 0. So doing
nothing earns 0, and a step that damages good data adds errors and can only lower a score.
A component whose dirty table has nothing to fix scores 1 while the table stays error-free.

A gold-named column that no longer holds the values dirty already had right (a swap or
rotation of columns) is not the gold column: every component treats it as absent.
"""

from __future__ import annotations

from collections.abc import Callable

from dataclean_env.grading.gold_facts import GoldFacts, KeyedTable, holds

ErrorCounter = Callable[[GoldFacts, KeyedTable], int]


def duplicate_errors(facts: GoldFacts, keyed: KeyedTable) -> int:
    """Extra copies of a gold row, gold rows that are gone, and rows gold never had.

    Summed key by key that is: |copies - 1| for each gold key, the copies of every other
    key (rows without a key included), less one for each outlier key present (an outlier
    row is the outlier component's business, but not its extra copies). As set sizes:"""
    present = keyed.key_counts.keys()
    gold_present = len(present & facts.gold_keys)
    gold_absent = len(facts.gold_keys) - gold_present
    outliers_present = len(present & facts.outlier_keys)
    return gold_absent + keyed.snapshot.n_rows - gold_present - outliers_present


def missing_errors(facts: GoldFacts, keyed: KeyedTable) -> int:
    """Cells missing in dirty (and present in gold) that do not now hold the gold value in
    the gold column (in its place)."""
    errors = 0
    values, placed = keyed.snapshot.values, keyed.kinds
    for key, column, gold_value, canonical in facts.missing_canonicals:
        row = keyed.first_row.get(key)
        if row is None or column not in placed:
            errors += 1
            continue
        # holds: `cells_equal` for a present cell (False for a missing one), common cases first
        if not holds(values[column][row], gold_value, canonical, facts.kinds[column]):
            errors += 1
    return errors


def dtype_errors(facts: GoldFacts, keyed: KeyedTable) -> int:
    """Gold cells whose column is absent (or misplaced) or of the wrong kind, or whose row
    is absent."""
    absent_rows = len(facts.gold_keys) - len(keyed.first_row.keys() & facts.gold_keys)
    kinds = keyed.kinds
    errors = 0
    for column, kind in facts.kinds.items():
        errors += absent_rows if kinds.get(column) == kind else facts.n_rows
    return errors


def outlier_errors(facts: GoldFacts, keyed: KeyedTable) -> int:
    """Outlier rows still present plus good rows lost: removing good rows is not a fix."""
    kept_outliers = len(keyed.first_row.keys() & facts.outlier_keys)
    lost_rows = len(facts.gold_keys) - len(keyed.first_row.keys() & facts.gold_keys)
    return kept_outliers + lost_rows


def schema_errors(facts: GoldFacts, keyed: KeyedTable) -> int:
    """Gold columns absent, misplaced or of the wrong kind, plus columns gold does not have
    (a misplaced column is both: another column under a gold name, like a rename away)."""
    placed = keyed.kinds
    errors = sum(1 for column, kind in facts.kinds.items() if placed.get(column) != kind)
    extra = sum(1 for column in keyed.snapshot.kinds if column not in facts.kinds)
    return errors + extra + len(keyed.misplaced)


COMPONENTS: dict[str, ErrorCounter] = {
    "duplicate_score": duplicate_errors,
    "missing_score": missing_errors,
    "dtype_score": dtype_errors,
    "outlier_score": outlier_errors,
    "schema_score": schema_errors,
}


def component_score(errors_now: int, errors_dirty: int) -> float:
    if errors_dirty == 0:
        return 1.0 if errors_now == 0 else 0.0
    return max(0.0, 1.0 - errors_now / errors_dirty)
