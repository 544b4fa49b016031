"""Make logged conversations writable to Parquet (the workaround for a TRL crash).

With `log_completions=True`, `GRPOTrainer.log` writes the latest prompts and completions to
`completions/completions_<step>.parquet`. A call to a tool without arguments is logged as
`"arguments": {}`; when every tool call in the logged batch is like that, pyarrow infers a
struct with no fields for the column, which Parquet cannot store, and training stops with
`ArrowNotImplementedError: Cannot write struct type 'arguments' with no child field`.
Replacing each empty dict by None before the write keeps every other value as it was.
"""

from __future__ import annotations

from typing import Any


def parquet_safe(value: Any) -> Any:
    """`value` with every empty dict nested in it (lists and dicts) replaced by None."""
    if isinstance(value, dict):
        return {key: parquet_safe(item) for key, item in value.items()} if value else None
    if isinstance(value, list):
        return [parquet_safe(item) for item in value]
    return value
