"""rename_columns: rename by an explicit mapping, or turn every header into snake_case."""

from __future__ import annotations

import pandas as pd
from pydantic import Field

from dataclean_env.errors import InvalidParameters
from dataclean_env.operations.column_checks import require_columns, require_modifiable
from dataclean_env.operations.registry import OpContext, OpResult, Params, operation
from dataclean_env.table.deferred import Table, derive
from dataclean_env.table.values import snake_case

MAX_NAME_LENGTH = 64


class RenameColumnsParams(Params):
    mapping: dict[str, str] | None = Field(
        default=None, description="Old name -> new name (default: snake_case every header)."
    )


@operation(
    "rename_columns",
    RenameColumnsParams,
    rank=1,
    lazy=True,
    description="Rename columns by `mapping`; without one, convert every header to snake_case.",
)
def rename_columns(table: Table, params: RenameColumnsParams, ctx: OpContext) -> OpResult:
    snapshot = ctx.snapshot_of(table)
    if params.mapping is None:
        mapping = {c: snake_case(c) for c in snapshot.columns if c not in ctx.protected_columns}
    else:
        require_columns(snapshot, params.mapping)
        require_modifiable(ctx, [old for old, new in params.mapping.items() if old != new])
        mapping = {old: new.strip() for old, new in params.mapping.items()}
    bad = [
        new
        for new in mapping.values()
        if not new or len(new) > MAX_NAME_LENGTH or not new.isprintable()
    ]
    if bad:
        raise InvalidParameters(
            f"new column names must be 1 to {MAX_NAME_LENGTH} printable characters; got {bad}"
        )
    names = [mapping.get(c, c) for c in snapshot.columns]
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise InvalidParameters(f"renaming would give several columns the name(s) {clashes}")
    changed = {old: new for old, new in mapping.items() if old != new}
    if not changed:
        return OpResult(table, "No column renamed.")
    listed = ", ".join(f"{old!r} -> {new!r}" for old, new in changed.items())
    result = derive(table, lambda frame: _renamed(frame, names))
    return OpResult(result, f"Renamed {listed}.", snapshot.renamed(names))


def _renamed(table: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    result = table.copy(deep=False)
    result.columns = names
    return result
