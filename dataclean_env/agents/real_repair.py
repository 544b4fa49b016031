"""The heuristic's real-table mode where the table offers SQL: learn repairs, apply them.

It acts only from observations (a `query` step's `query_result`, a `label` step's message),
never from the clean file or the grader, in a fixed number of steps:

1. `query` one row in every `n // 20` (a spread of the table, the same rows every time);
2. on a labelled variant, `label` those rows (20, the standard budget) and learn per-column
   rules from each labelled row's dirty cells against its clean values (`repair_rules`),
   keeping a rule only if it fixes more labelled cells than it breaks;
3. apply the kept rules in one `sql` step (one `UPDATE` per column), then `finish`.

Without labels the heuristic repairs only what the table's own values prove
(`unlabelled_repair`).
"""

from __future__ import annotations

import json
from typing import Any

from dataclean_env.agents.repair_rules import EMPTY, Rule, learn_column, update_statement
from dataclean_env.agents.unlabelled_repair import FINISH, UnlabelledRepairer

LABEL_ROWS = 20  # Raha and Baran's standard budget of labelled tuples
SHOWN_MISSING = "NULL"  # how query results write a missing cell


def _payload(message: str) -> Any:
    return json.loads(message.split(": ", 1)[1])


def _cell(value: Any) -> str:
    return EMPTY if value is None or value == SHOWN_MISSING else str(value)


class LabelledRepairer:
    """One episode's plan on a real table with `query` and `sql` (see the module doc)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.stage = "sample"
        self.sample: list[dict[str, Any]] = []  # the rows queried, as the query wrote them
        self.dirty: dict[str, dict[str, str]] = {}  # row key (as text) -> column -> cell
        self.prover: UnlabelledRepairer | None = None

    def act(self, observation: dict[str, Any], ops: set[str]) -> dict[str, Any]:
        if self.stage == "sample":
            self.stage = "label"
            rows = max(1, observation["shape"][0])
            every = max(1, rows // LABEL_ROWS)
            sql = f"SELECT * FROM t WHERE rowid % {every} = 0 ORDER BY rowid LIMIT {LABEL_ROWS}"
            return {"operation": "query", "parameters": {"sql": sql}}
        if self.stage == "label":
            self.stage = "learn"
            self._read_sample(observation.get("query_result"))
            if "label" not in ops or not self.dirty:
                return FINISH
            ids = [row[self.key] for row in self.sample]
            return {"operation": "label", "parameters": {"row_ids": ids}}
        if self.prover is None:
            learned = self._repairs(_payload(observation["message"]))
            self.prover = UnlabelledRepairer(self.key, first=learned)
        return self.prover.act(observation)

    def _read_sample(self, result: dict[str, Any] | None) -> None:
        if result is None:  # the query was refused
            return
        self.sample = [dict(zip(result["columns"], row, strict=True)) for row in result["rows"]]
        for row in self.sample:
            self.dirty[str(row[self.key])] = {c: _cell(v) for c, v in row.items() if c != self.key}

    def _repairs(self, clean: dict[str, dict[str, Any] | None]) -> list[str]:
        columns = sorted({c for cells in self.dirty.values() for c in cells})
        learned: dict[str, list[Rule]] = {}
        for column in columns:
            # A key gold lacks (a row a layer added) is None: it teaches no value.
            pairs = [
                (cells[column], _cell(gold[column]))
                for row_id, cells in self.dirty.items()
                if (gold := clean.get(row_id)) is not None and column in gold
            ]
            rules = learn_column(pairs)
            if rules:
                learned[column] = rules
        return [update_statement(c, rules) for c, rules in learned.items()]
