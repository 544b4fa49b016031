"""Random actions for the tests that play random episodes: every operation and alias, with
parameters that are sometimes right, sometimes of the wrong type, sometimes unknown."""

from __future__ import annotations

import math
import random
from typing import Any

from dataclean_env.operations import alias_names, operation_names

STRATEGIES = ["mean", "median", "mode", "ffill", "bfill", "constant", "average", None]
DTYPES = ["auto", "int", "float", "str", "bool", "datetime", "decimal", 3, None]
VALUES = [0, 1.5, -1, "junk", "", True, "2024-01-31", "$1,200", [1], {"a": 1}, math.nan, None]
THRESHOLDS = [None, 0.1, 0.5, 1.0, 1.5, 2, 3.0, "2", 0, -1.0, 150.0, math.inf]
NEW_NAMES = ["x_junk", "", "   ", "y" * 70, " padded ", "Mixed Case", "id", "price", "a-b"]


def _column(rng: random.Random, columns: list[str]) -> Any:
    roll = rng.random()
    if roll < 0.7 and columns:
        return rng.choice(columns)
    if roll < 0.8:
        return "x_nope"
    if roll < 0.85:
        return 5
    return None


def _put(params: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        params[key] = value


def random_action(rng: random.Random, columns: list[str]) -> dict[str, Any]:
    names = operation_names() + alias_names() + ["no_such_op"]
    weights = [0.3 if n == "finish" else 1.0 for n in names]
    name = rng.choices(names, weights)[0]
    params: dict[str, Any] = {}
    if name == "remove_duplicates":
        choice = rng.randrange(5)
        if choice == 1 and columns:
            params["subset"] = rng.sample(columns, rng.randint(1, min(2, len(columns))))
        elif choice == 2:
            params["subset"] = rng.choice(["a", [], ["x_nope"], [1]])
        elif choice == 3:
            params["keep"] = "first"
    elif name.startswith("fill_missing"):
        if name == "fill_missing" or rng.random() < 0.2:
            _put(params, "strategy", rng.choice(STRATEGIES))
        _put(params, "column", _column(rng, columns))
        constant = name == "fill_missing_constant" or params.get("strategy") == "constant"
        if rng.random() < (0.9 if constant else 0.1):
            _put(params, "value", rng.choice(VALUES))
    elif name == "fix_dtype":
        _put(params, "dtype", rng.choice(DTYPES))
        _put(params, "column", _column(rng, columns))
    elif name == "remove_outliers":
        _put(params, "method", rng.choice(["iqr", "zscore", "mad", None]))
        _put(params, "column", _column(rng, columns))
        _put(params, "threshold", rng.choice(THRESHOLDS))
    elif name == "rename_columns":
        choice = rng.randrange(4)
        if choice == 1 and columns:
            new = rng.choice([*NEW_NAMES, *columns])
            params["mapping"] = {rng.choice(columns): new}
        elif choice == 2:
            params["mapping"] = rng.choice(["a", {"x_nope": "y"}, {}, None])
    if rng.random() < 0.05:
        params["unexpected"] = 1
    return {"operation": name, "parameters": params}
