"""label: the clean values of the rows it names (the labelling protocol of Raha and Baran).

Only a labelled variant offers it (`tasks/custom.py`), within the task's label budget of
rows; the episode counts the rows labelled (`labels_used`, reported with the score) and
refuses a request past the budget before this runs. It changes nothing.
"""

from __future__ import annotations

import json

from pydantic import Field

from dataclean_env.errors import LabelsNotOffered
from dataclean_env.operations.claims import LABEL_OPERATION
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation
from dataclean_env.operations.rows import RowId
from dataclean_env.table.deferred import Table

MAX_LABELLED_ROWS = 100  # rows one request may name (a budget is smaller still)


class LabelParams(Params):
    row_ids: list[RowId] = Field(
        min_length=1, max_length=MAX_LABELLED_ROWS, description="Row keys."
    )


@operation(
    LABEL_OPERATION,
    LabelParams,
    rank=5,
    repeatable=True,
    lazy=True,
    description="Clean values of the rows `row_ids` (label budget).",
)
def label(table: Table, params: LabelParams, ctx: OpContext) -> OpResult:
    if ctx.clean_rows is None:
        raise LabelsNotOffered("this episode offers no labels")
    rows = ctx.clean_rows(list(params.row_ids))
    return OpResult(table, f"Clean values of {len(rows)} rows: " + json.dumps(rows))
