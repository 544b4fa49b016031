"""Damage never pays on the generated families: from every state along an instance's own
solution, no damaging step (dropping a good row, writing junk into cells, mapping or
blanking real values, clamping everything, deduplicating on a non-key column) raises the
score, and a refused one changes nothing."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.generation.crm import TEST_DOMAINS
from dataclean_env.generation.treatments import TOKEN_POOL
from dataclean_env.operations.program import opened
from dataclean_env.schemas import Action
from dataclean_env.table.values import MISSING
from tests.support import GENERATED_IDS

JUNK = {"str": "junk", "int": -987654, "float": -98765.4321, "bool": None, "datetime": "1901-02-03"}


def fork(episode: Episode) -> Episode:
    """An independent copy: operations never mutate a table, so sharing it is safe."""
    clone = copy.copy(episode)
    clone.history, clone.messages = list(episode.history), list(episode.messages)
    return clone


def damaging_actions(episode: Episode) -> list[dict[str, Any]]:
    snapshot = episode.snapshot
    (key,) = episode.spec.protected_columns
    keys = snapshot.values[key]
    counts = Counter(keys)
    unique = [k for k in keys if counts[k] == 1]
    test_rows = {  # rows the card asks to drop are not good rows
        k
        for k, email in zip(keys, snapshot.values.get("email", []), strict=False)
        if str(email).lower().rsplit("@", 1)[-1] in TEST_DOMAINS
    }
    good = [k for k in unique if k not in test_rows][:2]
    actions: list[dict[str, Any]] = [{"operation": "drop_rows", "parameters": {"row_ids": good}}]
    for column in snapshot.columns:
        if column == key:
            continue
        kind = snapshot.kinds[column]
        # Real values only: blanking a null-like token would be a repair, not damage.
        present = [v for v in snapshot.values[column] if v is not MISSING and v not in TOKEN_POOL]
        if JUNK[kind] is not None and good:
            actions.append(
                {
                    "operation": "set_cell",
                    "parameters": {"row_id": good[0], "column": column, "value": JUNK[kind]},
                }
            )
        if len(counts) == len(keys):  # with copies left, a crude dedupe also removes some
            actions.append({"operation": "dedupe", "parameters": {"keys": [column]}})
        if kind == "str" and present:
            value = str(present[0])
            actions += [
                {"operation": "map", "parameters": {"column": column, "mapping": {value: "junk"}}},
                {"operation": "replace_missing", "parameters": {"columns": [column], "tokens": [value]}},
                {"operation": "regex_replace", "parameters": {"column": column, "pattern": ".", "replacement": "x"}},
                {"operation": "fill_missing", "parameters": {"column": column, "strategy": "constant", "value": "junk"}},
            ]  # fmt: skip
        if kind in ("int", "float"):
            actions.append(
                {
                    "operation": "clamp_outliers",
                    "parameters": {"column": column, "low": 1e6, "high": 1e6 + 1},
                }
            )
    return [a for a in actions if a["operation"] in episode.spec.operations]


@pytest.mark.parametrize("task_id", GENERATED_IDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_no_damaging_step_raises_the_score_of_a_generated_instance(registry, task_id, seed) -> None:
    task = registry.make(task_id, seed, "eval")
    episode = Episode("damage", task)
    tried = accepted = 0
    for state in [None, *opened(task.reference_plan)]:
        if state is not None:
            episode.step(Action(**state))
        before = episode.reward.total
        for action in damaging_actions(episode):
            clone = fork(episode)
            tried += 1
            try:
                result = clone.step(Action(**action))
            except EnvError:
                assert clone.table is episode.table and clone.reward == episode.reward
                continue
            accepted += 1
            assert result.reward.total <= before, (state, action, before, result.reward)
    assert episode.reward.total == 0.9999
    assert accepted >= tried // 3  # the damage was really done, not merely refused
