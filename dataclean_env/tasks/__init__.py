"""Task families and the process-wide task registry."""

from __future__ import annotations

from functools import lru_cache

from dataclean_env.settings import get_settings
from dataclean_env.tasks.fixed import FixedFamily
from dataclean_env.tasks.registry import Task, TaskFamily, TaskRegistry, TaskSpec


@lru_cache(maxsize=1)
def default_registry() -> TaskRegistry:
    """Every task family, loaded once per process."""
    return TaskRegistry([FixedFamily(get_settings().datasets_dir)])


__all__ = ["Task", "TaskFamily", "TaskRegistry", "TaskSpec", "default_registry"]
