"""Data Cleaning OpenEnv for verifiers: `vf-eval dataclean-verifiers --env.taskset.base-url ...`.

verifiers finds a taskset by importing the package named after its id and taking the
`Taskset` and `Env` subclasses listed in `__all__`.
"""

from dataclean_verifiers.taskset import (
    DataCleaningConfig,
    DataCleaningEnv,
    DataCleaningTaskset,
)

__all__ = ["DataCleaningConfig", "DataCleaningEnv", "DataCleaningTaskset"]
