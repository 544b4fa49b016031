"""Cleaning operations. Importing this package registers every operation module."""

from dataclean_env.operations import (  # noqa: F401  (imported to register)
    columns,
    control,
    dependencies,
    dtypes,
    duplicates,
    fill,
    formats,
    outliers,
    program,
    rows,
    text,
)
from dataclean_env.operations.plan import run_plan
from dataclean_env.operations.registry import (
    OpContext,
    Operation,
    OpResult,
    alias_names,
    canonical_name,
    get_operation,
    operation_names,
    resolve,
)

__all__ = [
    "OpContext",
    "OpResult",
    "Operation",
    "alias_names",
    "canonical_name",
    "get_operation",
    "operation_names",
    "resolve",
    "run_plan",
]
