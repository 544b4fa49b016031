"""The built-in heuristic agent: a policy that reads the observation, not the task id.

It first follows the steps the task's rule card asks for (see `rule_card`), then walks the
canonical pipeline (duplicates, headers, missing values, types, outliers, schema check,
finish), deciding each stage from what the observation shows and what the description asks
for (which fill statistic, which column holds outliers, target names).

On a real table (a description that says it is scored by net repair) the pipeline's
guesses would break right cells, so it makes only the repairs the table's own values
prove: from aggregates over the whole table where it offers `query` and `sql`
(`unlabelled_repair`), else from the rows it pages through (`profiling`). On a real
table's labelled variant (it offers `label`, `query` and `sql`) it learns per-column rules
from the rows it labels instead and applies them in SQL (`real_repair`).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from dataclean_env.agents.claims_player import ClaimsPlayer, claim_kind
from dataclean_env.agents.profiling import TableProfile
from dataclean_env.agents.real_repair import LabelledRepairer
from dataclean_env.agents.rule_card import CardPlan, read_card
from dataclean_env.agents.unlabelled_repair import UnlabelledRepairer
from dataclean_env.table.values import snake_case

_KINDS = "int|float|str|datetime|bool"
_TARGET = re.compile(rf"\b([a-z][a-z0-9_]*) (?:{_KINDS})\b")
_SCHEMA_LIST = re.compile(r"target schema ([a-z0-9_, ]+)")
_STAT = re.compile(r"\b(mean|median|mode)\b")
_KEY = re.compile(r"(\w+) is the protected key|identified by '(\w+)' \(protected\)")
SCAN_WINDOW = 50
# How every real table's description names its score; "repair F1" is how task.json files
# written before grader-3 name it.
_REAL_TABLE = re.compile(r"net repair|repair F1", re.I)


def target_columns(description: str) -> list[str]:
    """Column names the description gives as the target ('age int, ...' or 'schema a, b')."""
    typed = _TARGET.findall(description)
    if typed:
        return typed
    listed = _SCHEMA_LIST.search(description)
    return [n.strip() for n in listed.group(1).split(",") if n.strip()] if listed else []


def fill_statistic(description: str, column: str, numeric: bool) -> str:
    """The statistic the description names for this column, else mean/mode by type."""
    text = description.lower()
    for sentence in re.split(r"[.;](?:\s|$)", text):
        if column.lower() in sentence or column.replace("_", " ") in sentence:
            found = _STAT.findall(sentence)
            if found:
                return found[-1] if len(found) == 1 else _closest_stat(sentence, column)
    return "mean" if numeric else "mode"


def _closest_stat(sentence: str, column: str) -> str:
    at = sentence.find(column.lower())
    stats = [(abs(m.start() - at), m.group(1)) for m in _STAT.finditer(sentence) if m.start() > at]
    return min(stats)[1] if stats else _STAT.findall(sentence)[0]


class HeuristicAgent:
    name = "heuristic-baseline"

    def __init__(self) -> None:
        self.done_stages: set[str] = set()
        self.card: CardPlan | None = None  # read from the description on the first step
        self.key: str | None = None  # the protected key column the card names
        self.scan_next = 0  # next row position to look at when hunting rows to drop
        self.to_drop: list[Any] = []
        self.claims: ClaimsPlayer | None = None  # on tasks graded on claims
        self.profile: TableProfile | None = None  # real tables: what the rows seen show
        self.repairs: list[dict[str, Any]] | None = None
        self.learner: LabelledRepairer | None = None  # real tables that offer labels
        self.prover: UnlabelledRepairer | None = None  # real tables with SQL, no labels

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        ops = set(observation["available_operations"])
        kind = claim_kind(ops)
        if kind is not None:
            self.claims = self.claims or ClaimsPlayer(kind)
            return self.claims.act(observation)
        description = observation["task_description"]
        columns = observation["columns"]
        if self.card is None:
            found = _KEY.search(description)
            self.key = (found.group(1) or found.group(2)) if found else None
            self.card = read_card(description, columns, ops, self.key)
            if any(step["operation"] == "fix_dtype" for step in self.card.steps) or re.search(
                r"ISO text|stays text", description
            ):
                self.done_stages.add("dtype")  # the card says which types it wants
        real = bool(_REAL_TABLE.search(description))
        if self.card.steps and not real:  # a card's blanket steps (strip) break right cells
            return self.card.steps.pop(0)
        if real:
            if self.key and {"label", "query", "sql"} <= ops:
                self.learner = self.learner or LabelledRepairer(self.key)
                return self.learner.act(observation, ops)
            if {"query", "sql"} <= ops:
                self.prover = self.prover or UnlabelledRepairer(self.key)
                return self.prover.act(observation)
            return self._profile_and_repair(observation, ops)
        if self.card.drop_matching and self.key:
            action = self._hunt(observation, *self.card.drop_matching)
            if action:
                return action
        missing = {
            c: n
            for c, n in observation["missing_values"].items()
            if n and c not in self.card.leave_empty
        }
        targets = target_columns(description)

        if observation["duplicate_count"] and "remove_duplicates" in ops:
            return self._once("dedup", "remove_duplicates", {})
        if "rename_columns" in ops and "rename" not in self.done_stages:
            mapping = _rename_mapping(columns, targets)
            if mapping:
                return self._once("rename", "rename_columns", {"mapping": mapping})
        if missing and "fill_missing" in ops:
            column = next(iter(missing))
            numeric = observation["dtypes"][column] in ("int64", "float64") or _looks_numeric(
                observation["sample_rows"], column
            )
            strategy = fill_statistic(description, column, numeric)
            self.done_stages.add("fill")
            return {
                "operation": "fill_missing",
                "parameters": {"strategy": strategy, "column": column},
            }
        if "fix_dtype" in ops and "dtype" not in self.done_stages:
            return self._once("dtype", "fix_dtype", {"dtype": "auto"})
        if (
            "remove_outliers" in ops
            and "outliers" not in self.done_stages
            and "outlier" in description
        ):
            column = _outlier_column(description, columns, observation["dtypes"])
            if column:
                return self._once(
                    "outliers", "remove_outliers", {"method": "iqr", "column": column}
                )
        if "validate_schema" in ops and "validate" not in self.done_stages:
            return self._once("validate", "validate_schema", {})
        return {"operation": "finish", "parameters": {}}

    def _hunt(self, observation: dict[str, Any], column: str, domain: str) -> dict[str, Any] | None:
        """Page through the table with show_rows, noting rows whose `column` is at `domain`;
        then drop them by id. None once done."""
        offset = observation.get("sample_offset", 0)
        if self.scan_next > 0 and offset == self.scan_next - SCAN_WINDOW:
            suffix = "@" + domain.lower()
            for row in observation["sample_rows"]:
                if str(row.get(column, "")).strip().lower().endswith(suffix):
                    self.to_drop.append(row[self.key])
        if self.scan_next < observation["shape"][0]:
            self.scan_next += SCAN_WINDOW
            return {
                "operation": "show_rows",
                "parameters": {"offset": self.scan_next - SCAN_WINDOW, "limit": SCAN_WINDOW},
            }
        assert self.card is not None  # only a card's drop rule starts a hunt
        self.card.drop_matching = None
        if not self.to_drop:
            return None
        return {"operation": "drop_rows", "parameters": {"row_ids": sorted(set(self.to_drop))}}

    def _profile_and_repair(self, observation: dict[str, Any], ops: set[str]) -> dict[str, Any]:
        """Real tables: drop exact duplicates, page through the rows (using at most half the
        step budget), then make the repairs the profile supports, then finish."""
        if observation["duplicate_count"] and "remove_duplicates" in ops:
            return self._once("dedup", "remove_duplicates", {})
        if self.profile is None:
            self.profile = TableProfile()
        if self.repairs is None:
            self.profile.add_rows(observation["sample_rows"], self.key)
            budget = observation["step"] + observation["steps_remaining"]
            rows = observation["shape"][0]
            if "show_rows" in ops and self.scan_next < rows and observation["step"] < budget // 2:
                self.scan_next += SCAN_WINDOW
                return {
                    "operation": "show_rows",
                    "parameters": {"offset": self.scan_next - SCAN_WINDOW, "limit": SCAN_WINDOW},
                }
            self.repairs = self.profile.repairs(ops)
        if self.repairs and observation["steps_remaining"] > 1:
            return self.repairs.pop(0)
        return {"operation": "finish", "parameters": {}}

    def _once(self, stage: str, operation: str, parameters: dict[str, Any]) -> dict[str, Any]:
        self.done_stages.add(stage)
        return {"operation": operation, "parameters": parameters}


def _rename_mapping(columns: list[str], targets: list[str]) -> dict[str, str]:
    """Current header -> target name, by snake_case and then by closest spelling."""
    mapping: dict[str, str] = {}
    free = [t for t in targets if t not in columns]
    for column in columns:
        if column in targets:
            continue
        guess = snake_case(column)
        if guess not in free and free:
            close = difflib.get_close_matches(guess, free, n=1, cutoff=0.5)
            guess = close[0] if close else guess
        if guess != column and guess not in columns and guess not in mapping.values():
            mapping[column] = guess
        if guess in free:
            free.remove(guess)
    return mapping


def _looks_numeric(rows: list[dict[str, Any]], column: str) -> bool:
    values = [r.get(column) for r in rows if r.get(column) not in (None, "NULL")]
    cleaned = [str(v).replace("$", "").replace(",", "").strip() for v in values]
    return bool(cleaned) and all(re.fullmatch(r"-?\d+(\.\d+)?", v) for v in cleaned)


def _outlier_column(description: str, columns: list[str], dtypes: dict[str, str]) -> str | None:
    numeric = [c for c in columns if dtypes.get(c) in ("int64", "float64")]
    text = description.lower()
    named = [c for c in numeric if re.search(rf"\b{c} outliers\b", text)]
    return named[0] if named else None
