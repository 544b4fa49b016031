"""Cleaning operations. Importing this package registers every operation module."""

from dataclean_env.operations import (  # noqa: F401  (imported to register)
    claims,
    columns,
    control,
    dtypes,
    duplicates,
    fd_repair,
    fill,
    formats,
    labels,
    outliers,
    program,
    reading,
    rows,
    sql,
    text,
)
from dataclean_env.operations.registry import (
    OpContext,
    Operation,
    OpResult,
    alias_names,
    canonical_name,
    get_operation,
    operation_names,
    resolve,
    with_aliases,
)
from dataclean_env.operations.replay import replay

__all__ = [
    "OpContext",
    "OpResult",
    "Operation",
    "alias_names",
    "canonical_name",
    "get_operation",
    "operation_names",
    "replay",
    "resolve",
    "with_aliases",
]
