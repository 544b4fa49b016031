"""Data Cleaning OpenEnv: clean a dirty table one operation per step, scored against gold."""

__version__ = "0.3.0"
ENV_NAME = "data-cleaning-openenv"
