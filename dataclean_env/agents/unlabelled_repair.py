"""The heuristic's real-table mode without labels: repairs the table's own values prove.

With no label there is no evidence of which cells are wrong but the table itself, and on a
table graded by repair F1 a wrong change costs as much as a right one earns; so each rule
acts only where its evidence is strong, and leaves the rest alone. It reads with `query`
(aggregates over the whole table, the same statements every time) and writes with `sql`:

1. one profile query: per column its filled and distinct cells, non-ASCII cells, cells with
   mangled characters (U+FFFD or a combining mark) and null spellings (`N/A`, `null`, ...);
2. per low-cardinality column its value counts; per repeated column, how often it decides
   each other column (functional-dependency discovery), then the violations of the
   dependencies that hold almost everywhere;
3. the repairs, as `UPDATE`s in `sql` steps, then `finish`:
   * mangled characters: in a column whose every non-ASCII cell is mangled, they are
     dropped (the character they stood for cannot be recovered);
   * null spellings become empty cells in a column that already writes missing as empty;
   * a rare value one edit from a value at least `TYPO_RATIO` times as frequent takes it;
   * a dependency `A -> B` that at least `FD_SUPPORT` of the cells keep (each holds its A
     group's most common B): in a violating group whose top value of B has `FD_MAJORITY` of
     its cells and two more than the rest, the rest take the top value; in a column empty
     in at most `MAX_FILL_SHARE` of its rows (an implicit missing value, not its
     convention), an empty cell takes its group's value on the same terms.

What it cannot see: a corruption applied to most of a column (the swapped date parts of
Rayyan: every dirty cell is itself a valid date), and a right value that has no twin in the
table (a missing volume whose clean value `-1` never appears in the dirty column).
"""

from __future__ import annotations

from typing import Any

from dataclean_env.agents.column_formats import unit_statement, variant_statements
from dataclean_env.agents.entity_reports import count_query, merge_statements
from dataclean_env.agents.profiling import NULL_SPELLINGS
from dataclean_env.agents.repair_rules import as_text, literal, quoted

FINISH: dict[str, Any] = {"operation": "finish", "parameters": {}}
MAX_STATEMENTS = 20  # the `sql` operation's limits per step
MAX_SQL_CHARS = 20_000
MAX_RESULT_ROWS = 50  # rows one `query` returns
NON_ASCII = r"[^\x00-\x7F]"
MANGLED = r"[\x{FFFD}\p{Mn}]"  # the replacement character, or a combining mark
MAX_MANGLED_SHARE = 0.1  # more than this and the characters may be the column's own
LOW_CARDINALITY = MAX_RESULT_ROWS  # a column whose every value one query lists
TYPO_RATIO = 10
TYPO_MIN_COUNT = 5  # the frequent value's cells
TYPO_MIN_LENGTH = 4
FD_SUPPORT = 0.95
FD_MAJORITY = 0.75
MAX_FILL_SHARE = 0.2  # a column emptier than this may write missing as empty on purpose
STEP_RESERVE = 3  # steps kept beyond the planned repairs: later repairs and `finish`


def _query(sql: str) -> dict[str, Any]:
    return {"operation": "query", "parameters": {"sql": sql}}


def one_edit(a: str, b: str) -> bool:
    """True when `a` and `b` differ by one insertion, deletion or substitution."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = next((k for k in range(len(a)) if a[k] != b[k]), len(a))
    return a[i + (len(a) == len(b)) :] == b[i + 1 :]


def typo_map(counts: list[tuple[str, int]]) -> dict[str, str]:
    """Rare value -> the one frequent value a single edit away (case variants and numbers
    are left alone: `eng` and `ENG` may both be right, `12` and `13` are both numbers)."""
    mapping = {}
    for value, n in counts:
        if len(value) < TYPO_MIN_LENGTH or not any(ch.isalpha() for ch in value):
            continue
        near = [
            w
            for w, m in counts
            if m >= max(TYPO_MIN_COUNT, TYPO_RATIO * n)
            and w.lower() != value.lower()
            and one_edit(value, w)
        ]
        if len(near) == 1:
            mapping[value] = near[0]
    return mapping


def fill_statement(determinant: str, column: str) -> str:
    """Empty cells of `column` take their `determinant` group's value, where the group's
    filled cells agree as a dependency's repair requires."""
    a, b = quoted(determinant), quoted(column)
    groups = (
        f"SELECT a, arg_max(b, n) AS top, max(n) AS m, sum(n) AS s FROM "
        f"(SELECT {as_text(determinant)} AS a, {b} AS b, count(*) AS n FROM t "
        f"WHERE {a} IS NOT NULL AND {b} IS NOT NULL GROUP BY a, b) GROUP BY a"
    )
    return (
        f"UPDATE t SET {b} = g.top FROM ({groups}) AS g "
        f"WHERE CAST(t.{a} AS VARCHAR) = g.a AND t.{b} IS NULL "
        f"AND g.m >= {FD_MAJORITY} * g.s AND g.m - (g.s - g.m) >= 2"
    )


def _null_list() -> str:
    return ", ".join(literal(s) for s in sorted(NULL_SPELLINGS))


def _fitting(statements: list[str]) -> int:
    """How many of the first `statements` fit one `sql` step (the first always goes)."""
    taken, size = 1, len(statements[0])
    while taken < min(len(statements), MAX_STATEMENTS):
        size += len(statements[taken]) + 2  # the separator
        if size > MAX_SQL_CHARS:
            break
        taken += 1
    return taken


class UnlabelledRepairer:
    """One episode's plan on a real table with `query` and `sql` (see the module doc)."""

    def __init__(self, key: str | None, first: list[str] | None = None) -> None:
        self.key = key
        self.columns: list[str] = []
        self.rows = 0
        self.profile: dict[str, dict[str, int]] = {}
        self.reads: list[tuple[str, Any]] = []  # (what, detail) for each query asked
        self.asked: tuple[str, Any] | None = None
        self.statements: list[str] = list(first or [])  # repairs learned elsewhere go first
        self.started = False

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        if not self.started:
            self.started = True
            self.rows = observation["shape"][0]
            self.columns = [c for c in observation["columns"] if c != self.key]
            self.asked = ("profile", None)
            return _query(self._profile_sql())
        result = observation.get("query_result")  # None when the query was refused
        if self.asked is not None and result is not None:
            self._read(self.asked, result)
        self.asked = None
        if self.reads and observation["steps_remaining"] > STEP_RESERVE + self._sql_steps():
            self.asked = self.reads.pop(0)
            return _query(self._read_sql(self.asked))
        self.reads = []
        if self.statements and observation["steps_remaining"] > 1:
            return {"operation": "sql", "parameters": {"sql": ";\n".join(self._batch())}}
        return FINISH

    def _batch(self) -> list[str]:
        """The next statements that fit one `sql` step (the first always goes)."""
        taken = _fitting(self.statements)
        batch, self.statements = self.statements[:taken], self.statements[taken:]
        return batch

    def _sql_steps(self) -> int:
        """The `sql` steps the repairs planned so far take: reads stop short of them."""
        steps, rest = 0, self.statements
        while rest:
            steps, rest = steps + 1, rest[_fitting(rest) :]
        return steps

    def _profile_sql(self) -> str:
        nulls = _null_list()
        parts = []
        for i, column in enumerate(self.columns):
            text = as_text(column)
            parts += [
                f"count({quoted(column)}) AS n{i}",
                f"count(DISTINCT {quoted(column)}) AS d{i}",
                f"count(*) FILTER (WHERE regexp_matches({text}, '{NON_ASCII}')) AS a{i}",
                f"count(*) FILTER (WHERE regexp_matches({text}, '{MANGLED}')) AS m{i}",
                f"count(*) FILTER (WHERE lower(trim({text})) IN ({nulls})) AS z{i}",
            ]
        return "SELECT " + ", ".join(parts) + " FROM t"

    def _read(self, asked: tuple[str, Any], result: dict[str, Any]) -> None:
        what, detail = asked
        if what == "profile":
            self._plan(dict(zip(result["columns"], result["rows"][0], strict=True)))
        elif what == "reports" and self.key is not None and result["rows"][0][0]:
            self.statements += merge_statements(self.key, self.columns, self.profile, self.rows)
        elif what == "values" and not result["truncated"]:
            counts = [(str(v), n) for v, n in result["rows"]]
            for old, new in sorted(typo_map(counts).items()):
                self.statements.append(
                    f"UPDATE t SET {quoted(detail)} = {literal(new)} "
                    f"WHERE {as_text(detail)} = {literal(old)}"
                )
        elif what == "decides":
            stray = dict(zip(result["columns"], result["rows"][0], strict=True))
            for i, column in enumerate(self.columns):
                off, cells, spread = stray.get(f"x{i}"), stray.get(f"t{i}"), stray.get(f"g{i}")
                if cells and spread and (off or 0) <= (1 - FD_SUPPORT) * min(cells, spread):
                    if off:
                        self.reads.append(("violations", (detail, column)))
                    missing = self.rows - self.profile[column]["filled"]
                    if 0 < missing <= MAX_FILL_SHARE * self.rows:
                        self.statements.append(fill_statement(detail, column))
        elif what == "violations" and not result["truncated"]:
            determinant, column = detail
            self._repair_violations(determinant, column, result["rows"])

    def _plan(self, stats: dict[str, Any]) -> None:
        for i, column in enumerate(self.columns):
            filled, distinct = stats[f"n{i}"], stats[f"d{i}"]
            odd, mangled, nulls = stats[f"a{i}"], stats[f"m{i}"], stats[f"z{i}"]
            self.profile[column] = {"filled": filled, "distinct": distinct}
            if mangled and odd == mangled and mangled <= MAX_MANGLED_SHARE * filled:
                self.statements.append(
                    f"UPDATE t SET {quoted(column)} = "
                    f"regexp_replace({as_text(column)}, '{NON_ASCII}+', '', 'g') "
                    f"WHERE regexp_matches({as_text(column)}, '{MANGLED}')"
                )
            if nulls and filled < self.rows:
                self.statements.append(
                    f"UPDATE t SET {quoted(column)} = NULL "
                    f"WHERE lower(trim({as_text(column)})) IN ({_null_list()})"
                )
            if 1 < distinct <= LOW_CARDINALITY:
                self.reads.append(("values", column))
        if self.key is not None and count_query(self.key, self.columns, self.profile, self.rows):
            self.reads.insert(0, ("reports", None))
        for column in self.columns:
            self.statements.append(unit_statement(column))
            if 1 < self.profile[column]["distinct"] < self.profile[column]["filled"]:
                self.statements += variant_statements(column)
        for column in self.columns:
            filled, distinct = self.profile[column]["filled"], self.profile[column]["distinct"]
            if 1 < distinct <= filled // 2:  # a determinant repeats its values
                self.reads.append(("decides", column))

    def _read_sql(self, asked: tuple[str, Any]) -> str:
        what, detail = asked
        if what == "reports" and self.key is not None:
            return count_query(self.key, self.columns, self.profile, self.rows) or ""
        if what == "values":
            text = as_text(detail)
            return (
                f"SELECT {text} AS v, count(*) AS n FROM t WHERE {quoted(detail)} IS NOT NULL "
                f"GROUP BY v ORDER BY n DESC, v"
            )
        if what == "decides":
            a = quoted(detail)
            parts = []
            for i, column in enumerate(self.columns):
                if column == detail:
                    continue
                both = f"{a} IS NOT NULL AND {quoted(column)} IS NOT NULL"
                pairs = (
                    f"SELECT {a}, count(*) AS n FROM t WHERE {both} GROUP BY {a}, {quoted(column)}"
                )
                alone = f"SELECT count(*) AS n FROM t WHERE {both} GROUP BY {quoted(column)}"
                parts += [
                    f"(SELECT sum(s - m) FROM (SELECT sum(n) AS s, max(n) AS m FROM ({pairs}) "
                    f"GROUP BY {a})) AS x{i}",
                    f"(SELECT count(*) FROM t WHERE {both}) AS t{i}",
                    f"(SELECT sum(n) - max(n) FROM ({alone})) AS g{i}",
                ]
            return "SELECT " + ", ".join(parts)
        a, b = (quoted(c) for c in detail)
        return (
            f"SELECT a, arg_max(b, n) AS top, max(n) AS m, sum(n) AS s FROM "
            f"(SELECT {as_text(detail[0])} AS a, {as_text(detail[1])} AS b, count(*) AS n "
            f"FROM t WHERE {a} IS NOT NULL AND {b} IS NOT NULL "
            f"AND lower(trim({as_text(detail[0])})) NOT IN ({_null_list()}) GROUP BY a, b) "
            f"GROUP BY a HAVING count(*) > 1 ORDER BY a"
        )

    def _repair_violations(self, determinant: str, column: str, rows: list[list[Any]]) -> None:
        for a, top, most, total in rows:
            if most >= FD_MAJORITY * total and most - (total - most) >= 2:
                self.statements.append(
                    f"UPDATE t SET {quoted(column)} = {literal(str(top))} "
                    f"WHERE {as_text(determinant)} = {literal(str(a))} "
                    f"AND {as_text(column)} <> {literal(str(top))}"
                )
