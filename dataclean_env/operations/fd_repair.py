"""fd_repair: enforce a functional dependency key -> column by majority within each group.

Real-data cleaners repair "a customer_id has one email" violations this way: within each
group of rows sharing the key, every present cell of the column takes the group's most
frequent present value (ties: the value that appears first). Missing cells stay missing.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import pandas as pd
from pydantic import Field

from dataclean_env.errors import InvalidParameters
from dataclean_env.operations.column_checks import require_columns, require_modifiable, rewrite_rows
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation
from dataclean_env.table.values import MISSING


class FdRepairParams(Params):
    key: str = Field(description="The determining column (e.g. customer_id).")
    column: str = Field(description="The column that must be constant within each key group.")


@operation(
    "fd_repair",
    FdRepairParams,
    rank=2,
    repeatable=True,
    description="Make `column` constant within each group of equal `key` values, by majority.",
)
def fd_repair(table: pd.DataFrame, params: FdRepairParams, ctx: OpContext) -> OpResult:
    if params.key == params.column:
        raise InvalidParameters("key and column must be different columns")
    require_columns(table, [params.key, params.column])
    require_modifiable(ctx, [params.column])
    snapshot = ctx.snapshot_of(table)
    keys, cells = snapshot.values[params.key], snapshot.values[params.column]
    groups: dict[object, Counter[Any]] = defaultdict(Counter[Any])
    for key, cell in zip(keys, cells, strict=True):
        if key is not MISSING and cell is not MISSING:
            groups[key][cell] += 1
    # Counter.most_common keeps first-seen order among equal counts.
    majority = {key: counts.most_common(1)[0][0] for key, counts in groups.items()}
    repaired = [
        cell if key is MISSING or cell is MISSING else majority[key]
        for key, cell in zip(keys, cells, strict=True)
    ]
    return rewrite_rows(table, ctx, params.column, repaired, "fd_repair")
