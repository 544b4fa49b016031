"""In-process use from the project root: `from environment import DataCleaningEnv`."""

from dataclean_env.in_process import DataCleaningEnv

__all__ = ["DataCleaningEnv"]
