"""Run a sequence of actions on a table outside any episode (data generation, oracles, tests)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from dataclean_env.operations.registry import OpContext, resolve


def replay(
    table: pd.DataFrame, plan: Iterable[Mapping[str, Any]], context: OpContext | None = None
) -> pd.DataFrame:
    """Apply each `{"operation", "parameters"}` in order; errors propagate."""
    context = context or OpContext()
    for action in plan:
        op, params = resolve(action["operation"], action.get("parameters"))
        table = op.apply(table, params, context).table
    return table
