"""Task families and the process-wide task registry."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from dataclean_env.settings import Settings, get_settings
from dataclean_env.tasks.claim_families import ClaimsFamily
from dataclean_env.tasks.corpus import CorpusFamily
from dataclean_env.tasks.custom import CustomFamily
from dataclean_env.tasks.fixed import FixedFamily
from dataclean_env.tasks.generated import FAMILIES, GeneratedFamily
from dataclean_env.tasks.registry import Task, TaskFamily, TaskRegistry, TaskSpec


@lru_cache(maxsize=8)
def _registry(datasets_dir: Path, extra_datasets: str) -> TaskRegistry:
    fixed = FixedFamily(datasets_dir)
    extra = [Path(p) for p in extra_datasets.split(os.pathsep) if p.strip()]
    corpus = CorpusFamily()
    taken = [*fixed.tasks, *FAMILIES, *(spec.task_id for spec in corpus.specs())]
    custom = CustomFamily([datasets_dir, *extra], skip=fixed.folders, taken=taken)
    claims = ClaimsFamily([datasets_dir, *extra], taken=[*taken, *custom.tasks])
    return TaskRegistry([fixed, GeneratedFamily(), claims, corpus, custom])


def registry_for(settings: Settings) -> TaskRegistry:
    """Every task family for these settings, loaded once per process."""
    return _registry(settings.datasets_dir, settings.extra_datasets)


def default_registry() -> TaskRegistry:
    return registry_for(get_settings())


__all__ = ["Task", "TaskFamily", "TaskRegistry", "TaskSpec", "default_registry", "registry_for"]
