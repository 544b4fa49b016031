"""`RandomAgent` takes well-formed actions at random from the available operations, with
parameters drawn from the observation's columns and sample values (the server may still
refuse them): what acting without understanding earns."""

from __future__ import annotations

import random
from typing import Any

from dataclean_env.agents.protocol import FINISH, EpisodeKey
from dataclean_env.errors import InvalidParameters
from dataclean_env.operations import alias_names, get_operation, resolve
from dataclean_env.table.values import snake_case


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
