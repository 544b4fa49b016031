"""Data Cleaning OpenEnv: clean a dirty table one operation per step, scored against gold."""

__version__ = "0.3.0"
ENV_NAME = "data-cleaning-openenv"

__all__ = ["ENV_NAME", "Action", "DataCleaningEnv", "__version__"]

# The in-process API from the package alone (`from dataclean_env import DataCleaningEnv,
# Action`), imported on first use so `import dataclean_env` stays cheap.
_LAZY = {"DataCleaningEnv": "dataclean_env.in_process", "Action": "dataclean_env.schemas"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'dataclean_env' has no attribute {name!r}")
