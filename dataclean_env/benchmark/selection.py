"""Which episodes a run plays: (task, seed, split) triples from the command-line choices."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.tasks import TaskRegistry

# The groups of tasks a run selects by name (`--family`); not the generated families
# (`tasks.generated.FAMILIES`), though one of those may be selected by its task id too.
TASK_GROUPS = ("fixed", "generated", "corpus", "custom", "showcase", "claims", "all")


def parse_seeds(text: str) -> list[int]:
    """'0-99', '3,5,7' or '0-4,10' -> the listed seeds, in order, without repeats."""
    return list(iter_seeds(text))


def iter_seeds(text: str) -> Iterator[int]:
    """`parse_seeds`, one seed at a time: a long range costs only the seeds taken."""
    seen: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        first, dash, last = part.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"bad seed list {text!r}: use numbers and ranges like 0-9,12")
        for seed in range(int(first), int(last) + 1) if dash else [int(first)]:
            if seed not in seen:
                seen.add(seed)
                yield seed


def task_ids(registry: TaskRegistry, tasks: Sequence[str] | None, family: str) -> list[str]:
    """The named tasks (checked), else every task of the family: a kind (fixed, generated,
    corpus, custom, showcase; 'claims': every task graded on claims, i.e. detection,
    standardisation and audit; 'all': every task) or one generated family by its task id
    (e.g. crm)."""
    if tasks:
        for task_id in tasks:
            registry.spec(task_id)  # an unknown id fails here, before any episode runs
        return list(tasks)
    generated = [s.task_id for s in registry.specs() if s.family == "generated"]
    if family in generated:
        return [family]
    if family not in TASK_GROUPS:
        known = ", ".join([*TASK_GROUPS, *generated])
        raise ValueError(f"family must be one of {known}, not {family!r}")
    if family == "claims":
        return [s.task_id for s in registry.specs() if s.kind != "clean"]
    return [s.task_id for s in registry.specs() if family in ("all", s.family)]


def episodes(
    task_ids: Sequence[str], seeds: Iterable[int], split: str, limit: int | None = None
) -> list[EpisodeKey]:
    """Seed-major order (every task at seed 0, then at seed 1, ...), so that a run cut
    short by `limit` still covers every task."""
    keys = [EpisodeKey(task_id, seed, split) for seed in seeds for task_id in task_ids]
    return keys if limit is None else keys[:limit]
