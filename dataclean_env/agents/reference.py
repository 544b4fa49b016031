"""Agents: anything with a `name` and `act(observation) -> action dict`, one per episode.

Besides the built-in heuristic (`dataclean_env.agents.heuristic.HeuristicAgent`, the
project's baseline) and the LLM agent (`llm.py`), three reference agents bound what a score
means:

* `NoOpAgent` finishes at once: the score of the dirty table as it is;
* `RandomAgent` takes well-formed actions at random from the available operations, with
  parameters drawn from the observation's columns and sample values (the server may still
  refuse them): what acting without understanding earns;
* `OracleAgent` replays the task's reference plan (never shown to other agents): what the
  operations can reach;
* `TemplateAgent` never reads the description: one fixed plan per column name, written from
  the generated families' usual rules (US dates and numbers, the common null tokens, Title
  Case names, (XXX) XXX-XXXX phones): what a card-free template earns.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.errors import InvalidParameters
from dataclean_env.operations import alias_names, get_operation, resolve
from dataclean_env.runner.selection import EpisodeKey
from dataclean_env.table.values import snake_case
from dataclean_env.tasks import TaskRegistry

FINISH = {"operation": "finish", "parameters": {}}


class Agent(Protocol):
    name: str

    def act(self, observation: dict[str, Any]) -> dict[str, Any]: ...


AgentFactory = Callable[[EpisodeKey], Agent]


class NoOpAgent:
    name = "noop-baseline"

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        return FINISH


class OracleAgent:
    name = "oracle-replay"

    def __init__(self, plan: Sequence[dict[str, Any]]):
        self._plan = list(plan)

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        return self._plan.pop(0) if self._plan else FINISH


# The card-free template: column name -> its fixed steps, in pipeline order.
_TOKENS = ["N/A", "null", "-", ""]
_DATES = ("created_at", "order_date", "signup_date", "counted_on", "hire_date", "ordered_on")
_TEMPLATE: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "full_name": [("title", {})],
    "name": [("title", {})],
    "email": [("lower", {})],
    "phone": [("phone_us", {})],
    "status": [("strip", {}), ("lower", {})],
    "segment": [("replace_missing", {"tokens": _TOKENS})],
    "department": [
        ("replace_missing", {"tokens": _TOKENS}),
        ("fill_missing", {"strategy": "constant", "value": "Unassigned"}),
    ],
    "reorder_level": [
        ("replace_missing", {"tokens": _TOKENS}),
        ("fill_missing", {"strategy": "constant", "value": "0"}),
        ("fix_dtype", {"dtype": "int"}),
    ],
    **{column: [("normalize_dates", {"convention": "us"})] for column in _DATES},
    "hire_date": [("normalize_dates", {"convention": "us"}), ("fix_dtype", {"dtype": "datetime"})],
    "ordered_on": [
        ("normalize_dates", {"convention": "us"}),
        ("fix_dtype", {"dtype": "datetime"}),
    ],
    "quantity": [("fix_dtype", {"dtype": "int"})],
    "on_hand": [("fix_dtype", {"dtype": "int"}), ("clamp_outliers", {"low": 0, "high": 1e9})],
    "age": [("fix_dtype", {"dtype": "int"}), ("clamp_outliers", {"low": 18, "high": 70})],
    "unit_price": [("fix_dtype", {"dtype": "float"})],
    "unit_cost": [("fix_dtype", {"dtype": "float"})],
    "lifetime_value": [("fix_dtype", {"dtype": "float"})],
    "revenue": [("fix_dtype", {"dtype": "float"}), ("clamp_outliers", {"low": 0, "high": 1e12})],
    "paid": [("fix_dtype", {"dtype": "bool"})],
    "active": [("fix_dtype", {"dtype": "bool"})],
    "discontinued": [("fix_dtype", {"dtype": "bool"})],
}


class TemplateAgent:
    """A fixed plan per column name that never reads the task description (or the data):
    drop exact duplicates, keep one row per key (the first column), strip text, then each
    known column's steps; operations the task lacks are skipped."""

    name = "card-free-template"

    def __init__(self) -> None:
        self._plan: list[dict[str, Any]] | None = None

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        if self._plan is None:
            self._plan = self._build(observation)
        return self._plan.pop(0) if self._plan else FINISH

    @staticmethod
    def _build(observation: dict[str, Any]) -> list[dict[str, Any]]:
        columns = observation["columns"]
        steps: list[dict[str, Any]] = [
            {"operation": "remove_duplicates", "parameters": {}},
            {"operation": "dedupe", "parameters": {"keys": columns[:1]}},
            {"operation": "strip", "parameters": {}},
        ]
        for column in columns:
            for operation, parameters in _TEMPLATE.get(column, []):
                column_parameter = "columns" if operation == "replace_missing" else "column"
                value = [column] if column_parameter == "columns" else column
                steps.append(
                    {"operation": operation, "parameters": {**parameters, column_parameter: value}}
                )
        if {"customer_id", "customer_name"} <= set(columns):
            steps.append(
                {
                    "operation": "fd_repair",
                    "parameters": {"key": "customer_id", "column": "customer_name"},
                }
            )
        allowed = set(observation["available_operations"])
        return [s for s in steps if s["operation"] in allowed]


class RandomAgent:
    """Uniform over the available operations (aliases aside), `finish` included."""

    name = "random-baseline"

    def __init__(self, key: EpisodeKey):
        # String seeding is stable across runs and machines (no salted hash()).
        self.rng = random.Random(f"random-agent:{key.task_id}:{key.split}:{key.seed}")

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        sampler = ParameterSampler(observation, self.rng)
        names = sampler.operations()
        self.rng.shuffle(names)
        for name in names:
            parameters = sampler.well_formed(name)
            if parameters is not None:
                return {"operation": name, "parameters": parameters}
        return FINISH


class ParameterSampler:
    """Plausible, well-formed parameters drawn from what an observation shows.

    Optional parameters are given half of the time. Value parameters (a fill value, a
    replacement, clamp bounds, row keys) come from the sample rows of the column the step
    names; numbers of rows (an offset, a limit) stay within the table and the schema.
    An operation with a required parameter it cannot make up gets None.
    """

    def __init__(self, observation: dict[str, Any], rng: random.Random):
        self.observation = observation
        self.rng = rng
        self.columns = list(observation["columns"])

    def operations(self, exclude: frozenset[str] = frozenset()) -> list[str]:
        aliases = set(alias_names())
        available = self.observation["available_operations"]
        return [n for n in available if n not in aliases and n not in exclude]

    def well_formed(self, operation: str, draws: int = 5) -> dict[str, Any] | None:
        """Parameters that the operation's parameter model accepts (a fill `value` without
        the `constant` strategy, say, is not), from at most `draws` tries."""
        for _ in range(draws):
            parameters = self.parameters(operation)
            if parameters is None:
                return None
            try:
                resolve(operation, parameters)
            except InvalidParameters:
                continue
            return parameters
        return None

    def parameters(self, operation: str) -> dict[str, Any] | None:
        schema = get_operation(operation).params_model.model_json_schema()
        required = set(schema.get("required", ()))
        column = self.rng.choice(self.columns) if self.columns else None
        parameters: dict[str, Any] = {}
        for param, spec in schema.get("properties", {}).items():
            if param not in required and self.rng.random() < 0.5:
                continue
            value = self._value(operation, param, spec, column)
            if value is None:
                if param in required:
                    return None
                continue
            if param in ("column", "key"):
                column = value
            parameters[param] = value
        return parameters

    def _value(self, operation: str, param: str, spec: dict[str, Any], column: str | None) -> Any:
        rng, columns = self.rng, self.columns
        values = self._samples(column)
        numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        if spec.get("enum"):
            return rng.choice(spec["enum"])
        if param in ("column", "key"):
            return column
        if param in ("subset", "keys", "columns") and columns:
            return rng.sample(columns, rng.randint(1, min(3, len(columns))))
        if param == "mapping" and operation == "rename_columns" and column:
            renamed = snake_case(column)
            return {column: renamed if renamed != column else f"{column}_2"}
        if param == "mapping" and len(values) >= 2:
            old, new = rng.sample(values, 2)
            return {str(old): new}
        if param in ("value", "old_value", "new_value") and values:
            return rng.choice(values)
        if param in ("low", "high") and numbers:
            return min(numbers) if param == "low" else max(numbers)
        if param == "threshold":
            return round(rng.uniform(1.0, 4.0), 1)
        if param == "tokens":
            return rng.sample(["N/A", "null", "-", "?", "none"], rng.randint(1, 3))
        if param == "pattern":
            return rng.choice([r"\s+", r"^\s+|\s+$", r"[^0-9]"])
        if param == "replacement":
            return rng.choice(["", " "])
        if param in ("row_id", "row_ids") and columns:
            # Rows are named by their key; every table here keeps its key first.
            keys = self._samples(columns[0])
            if keys:
                return rng.choice(keys) if param == "row_id" else rng.sample(keys, 1)
        if param == "operations":
            return self._program()
        if spec.get("type") == "integer":
            low = spec.get("minimum", 0)
            last_row = self.observation["shape"][0] - 1
            return rng.randint(low, spec.get("maximum", max(low, last_row)))
        return None

    def _program(self) -> list[dict[str, Any]] | None:
        """One to three inner steps for `program` (which refuses nesting and `finish`)."""
        inner = self.operations(exclude=frozenset({"program", "finish"}))
        steps = []
        for name in self.rng.sample(inner, min(len(inner), self.rng.randint(1, 3))):
            parameters = self.well_formed(name)
            if parameters is not None:
                steps.append({"operation": name, "parameters": parameters})
        return steps or None

    def _samples(self, column: str | None) -> list[Any]:
        rows = self.observation["sample_rows"]
        return [r[column] for r in rows if column in r and r[column] not in (None, "NULL")]


def reference_factories(registry: TaskRegistry) -> dict[str, AgentFactory]:
    """The reference agents and the heuristic baseline, by the name a run selects them."""
    return {
        "noop": lambda key: NoOpAgent(),
        "heuristic": lambda key: HeuristicAgent(),
        "random": RandomAgent,
        "oracle": lambda key: OracleAgent(registry.make(key.task_id, key.seed, key.split).solution),
        "template": lambda key: TemplateAgent(),
    }
