"""The reward's promises, checked on the four fixed tasks through real episodes.

(a) doing nothing scores <= 0.10; (b) the documented optimal plan scores 0.9999; (c) no
damaging step, nor two in a row, ever raises the score, and a refused step changes nothing;
(d) on expert_sales_pipeline the order of the steps matters; (e) the committed datasets are
what the generator writes; (f) the same task, seed and actions give the same results.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.schemas import Action
from dataclean_env.settings import Settings
from dataclean_env.table.values import kind_of, snake_case
from dataclean_env.tasks import TaskRegistry
from dataclean_env.tasks.fixed import load_metadata
from tests.support import TASK_IDS

ROOT = Path(__file__).resolve().parents[2]
SEEDS = [None, 7]
COMPONENTS = ["duplicate_score", "missing_score", "dtype_score", "outlier_score", "schema_score"]
# The column each task's plan removes outliers from (damage must use another one).
OUTLIER_COLUMNS = {"price", "unit_price", "Unit Price ($)"}

_METADATA = {entry["task_id"]: entry for entry in load_metadata(Settings().datasets_dir)}
# (task, number of plan steps already taken): every state before the plan's final finish.
STATES = [(task_id, k) for task_id in TASK_IDS for k in range(len(_METADATA[task_id]["solution"]))]


def new_episode(
    registry: TaskRegistry, task_id: str, seed: int | None, episode_id: str = "claims"
) -> Episode:
    return Episode(episode_id, registry.make(task_id, seed))


def play(
    registry: TaskRegistry,
    task_id: str,
    seed: int | None,
    actions: list[dict[str, Any]],
) -> Episode:
    episode = new_episode(registry, task_id, seed)
    for action in actions:
        episode.step(Action(**action))
    return episode


def step(episode: Episode, operation: str, parameters: dict[str, Any]):
    return episode.step(Action(operation=operation, parameters=parameters))


@dataclass
class Fingerprint:
    """Everything a refused step must leave as it was."""

    table: pd.DataFrame
    columns: list[str]
    reward: dict[str, float]
    history: list[Any]
    messages: list[str]
    done: bool
    observation: dict[str, Any]
    state: dict[str, Any]

    @classmethod
    def of(cls, episode: Episode) -> Fingerprint:
        return cls(
            table=episode.table.copy(deep=True),
            columns=list(episode.table.columns),
            reward=episode.reward.model_dump(),
            history=list(episode.history),
            messages=list(episode.messages),
            done=episode.done,
            observation=episode.observation().model_dump(),
            state=episode.state().model_dump(),
        )

    def assert_same(self, episode: Episode) -> None:
        assert episode.table.equals(self.table)
        assert list(episode.table.columns) == self.columns
        assert episode.reward.model_dump() == self.reward
        assert list(episode.history) == self.history
        assert list(episode.messages) == self.messages
        assert episode.done == self.done
        assert episode.observation().model_dump() == self.observation
        assert episode.state().model_dump() == self.state


# ── (a) doing nothing ───────────────────────────────────────────────────────


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task_id", TASK_IDS)
def test_doing_nothing_scores_at_most_ten_percent(
    registry: TaskRegistry, task_id: str, seed: int | None
) -> None:
    episode = new_episode(registry, task_id, seed)
    reward = episode.reward.model_dump()
    assert reward["total"] <= 0.10
    # DESIGN.md: doing nothing scores 0 on every component, so every field sits at the floor.
    assert reward == dict.fromkeys(reward, 0.0001)

    result = step(episode, "finish", {})
    assert result.done
    assert result.reward.total <= 0.10
    assert result.reward.model_dump() == dict.fromkeys(reward, 0.0001)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_validate_schema_alone_scores_nothing(registry: TaskRegistry, task_id: str) -> None:
    episode = new_episode(registry, task_id, None)
    step(episode, "validate_schema", {})
    result = step(episode, "finish", {})
    assert result.reward.total == 0.0001


# ── (b) the optimal plan ────────────────────────────────────────────────────


@pytest.mark.parametrize("seed", [*SEEDS, 12345])
@pytest.mark.parametrize("task_id", TASK_IDS)
def test_solution_scores_the_ceiling(
    registry: TaskRegistry, metadata: dict[str, dict], task_id: str, seed: int | None
) -> None:
    plan = metadata[task_id]["solution"]
    weights = metadata[task_id]["scoring"]
    episode = new_episode(registry, task_id, seed)
    for i, action in enumerate(plan):
        result = episode.step(Action(**action))
        assert result.done == (i == len(plan) - 1)
    reward = result.reward.model_dump()
    assert reward["total"] >= 0.95
    assert reward["total"] == 0.9999
    assert reward["penalty"] == 0.0001
    for name in COMPONENTS:
        assert reward[name] == (0.9999 if name in weights else 0.0001), name
    assert plan[-1]["operation"] == "finish"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_solution_rewards_do_not_depend_on_the_seed(
    registry: TaskRegistry, metadata: dict[str, dict], task_id: str
) -> None:
    """A seed only shuffles the dirty rows; the grader aligns rows by key."""
    runs = []
    for seed in (None, 1, 2, 99):
        episode = new_episode(registry, task_id, seed)
        rewards = [episode.reward.model_dump()]
        for action in metadata[task_id]["solution"]:
            rewards.append(episode.step(Action(**action)).reward.model_dump())
        runs.append(rewards)
    assert all(run == runs[0] for run in runs)


# ── (c) damage never pays ───────────────────────────────────────────────────


def gold_name(entry: dict[str, Any], column: str) -> str:
    """The gold column a table column stands for (header_map, same name, or snake_case)."""
    header_map = entry.get("header_map") or {}
    if column in header_map:
        return header_map[column]
    return column if column in entry["target_schema"] else snake_case(column)


@dataclass(frozen=True)
class Damage:
    kind: str
    operation: str
    parameters: dict[str, Any]

    def __str__(self) -> str:
        return f"{self.kind}: {self.operation} {self.parameters}"


def damaging_actions(episode: Episode, entry: dict[str, Any]) -> list[Damage]:
    """Each damaging action the task allows, for the episode's current table."""
    table = episode.table
    schema = entry["target_schema"]
    allowed = episode.spec.operations
    key = episode.task.grader.facts.key_column(tuple(table.columns))
    kinds = {c: kind_of(table[c].dtype) for c in table.columns}
    gold = {c: gold_name(entry, c) for c in table.columns}
    damages: list[Damage] = []

    # Drop good rows.
    for column in table.columns:
        if column != key:
            damages.append(Damage("drop_rows", "remove_duplicates", {"subset": [column]}))
    for column in table.columns:
        if kinds[column] in ("int", "float") and column != key and column not in OUTLIER_COLUMNS:
            damages.append(
                Damage(
                    "drop_rows",
                    "remove_outliers",
                    {"method": "zscore", "column": column, "threshold": 1.0},
                )
            )
            damages.append(
                Damage(
                    "drop_rows",
                    "remove_outliers",
                    {"method": "iqr", "column": column, "threshold": 0.1},
                )
            )
    # Fill with a constant that is not the gold value.
    for column in table.columns:
        if table[column].isna().any():
            value = {"int": 0, "float": 0, "datetime": "1999-01-01"}.get(kinds[column], "junk")
            damages.append(
                Damage(
                    "junk_fill",
                    "fill_missing",
                    {"strategy": "constant", "column": column, "value": value},
                )
            )
            damages.append(
                Damage("junk_fill", "fill_missing_constant", {"column": column, "value": -1})
            )
    # Rename a column away (the key column first).
    for column in sorted(table.columns, key=lambda c: c != key):
        damages.append(Damage("rename_away", "rename_columns", {"mapping": {column: "x_junk"}}))
    # Cast a column away from its gold type.
    for column in table.columns:
        if gold[column] in schema and kinds[column] in ("int", "float"):
            damages.append(Damage("cast_away", "fix_dtype", {"dtype": "str", "column": column}))
        if gold[column] in schema and kinds[column] == "int":
            damages.append(Damage("cast_away", "fix_dtype", {"dtype": "float", "column": column}))
    # Repeat the previous step identically.
    if episode.history:
        last = episode.history[-1]
        damages.append(Damage("repeat", last.operation, dict(last.parameters)))
    # Out-of-order steps that change nothing.
    last_rank = episode.history[-1].rank if episode.history else -1
    if last_rank > 1:
        damages.append(Damage("out_of_order", "rename_columns", {"mapping": {}}))
    if last_rank > 0 and episode.observation().duplicate_count == 0:
        damages.append(Damage("out_of_order", "remove_duplicates", {}))
    # Actions the engine must refuse (and so must change nothing).
    text_columns = [c for c in table.columns if schema.get(gold[c]) == "str" and c != key]
    for column in text_columns[:1]:
        damages.append(Damage("refused", "fix_dtype", {"dtype": "int", "column": column}))
        damages.append(Damage("refused", "remove_outliers", {"column": column}))
    numeric_with_holes = [
        c for c in table.columns if kinds[c] in ("int", "float") and table[c].isna().any()
    ]
    for column in numeric_with_holes[:1]:
        damages.append(
            Damage(
                "refused",
                "fill_missing",
                {"strategy": "constant", "column": column, "value": "junk"},
            )
        )
    columns = list(table.columns)
    damages.append(Damage("refused", "rename_columns", {"mapping": {columns[0]: columns[1]}}))
    damages.append(Damage("refused", "fix_dtype", {"dtype": "decimal"}))
    damages.append(Damage("refused", "remove_duplicates", {"subset": ["x_nope"]}))
    damages.append(Damage("refused", "drop_table", {}))
    damages.append(Damage("refused", "fill_missing_mean", {"strategy": "mode"}))
    return [d for d in damages if d.kind == "refused" or _canonical(d.operation) in allowed] + [
        Damage("refused", d.operation, d.parameters)
        for d in damages
        if d.kind != "refused" and _canonical(d.operation) not in allowed
    ]


def _canonical(operation: str) -> str:
    return "fill_missing" if operation.startswith("fill_missing") else operation


def apply_damage(episode: Episode, damage: Damage) -> bool:
    """Apply `damage`; True if it was accepted. A refused step must change nothing."""
    before = Fingerprint.of(episode)
    try:
        step(episode, damage.operation, damage.parameters)
    except EnvError:
        before.assert_same(episode)
        return False
    return True


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("task_id", "k"), STATES)
def test_no_damaging_step_raises_the_score(
    registry: TaskRegistry, task_id: str, k: int, seed: int | None
) -> None:
    entry = _METADATA[task_id]
    prefix = entry["solution"][:k]
    damages = damaging_actions(play(registry, task_id, seed, prefix), entry)
    assert {"drop_rows", "rename_away", "cast_away", "refused"} <= {d.kind for d in damages}

    # Dropping rows with a subset can also drop real duplicates; it must never beat the
    # plain remove_duplicates it contains.
    plain = play(registry, task_id, seed, prefix)
    before = plain.reward.total
    plain_dedup = (
        step(plain, "remove_duplicates", {}).reward.total
        if "remove_duplicates" in plain.spec.operations
        else before
    )

    violations = []
    accepted = 0
    for damage in damages:
        episode = play(registry, task_id, seed, prefix)
        if not apply_damage(episode, damage):
            continue
        assert damage.kind != "refused", f"{damage} was accepted"
        accepted += 1
        after = episode.reward.total
        limit = before
        if damage.kind == "drop_rows" and damage.operation == "remove_duplicates":
            limit = max(before, plain_dedup)
        if after > limit:
            violations.append(f"{damage}: {before} -> {after}")
        # These steps change no cell, so the penalty is the whole difference.
        if damage.kind == "out_of_order":
            assert after == pytest.approx(max(0.0001, before - 0.08), abs=1e-4), str(damage)
        if damage.kind == "repeat":
            cost = 0.0 if damage.operation == "fill_missing" else 0.02
            assert after == pytest.approx(max(0.0001, before - cost), abs=1e-4), str(damage)
    assert accepted >= 5
    assert not violations, "\n".join(violations)


def _pair_states() -> list[tuple[str, int]]:
    states = []
    for task_id in TASK_IDS:
        plan = _METADATA[task_id]["solution"]
        start = 1 if plan[0]["operation"] == "remove_duplicates" else 0
        for k in sorted({start, (start + len(plan) - 1) // 2, len(plan) - 2}):
            states.append((task_id, k))
    return states


@pytest.mark.parametrize(("task_id", "k"), _pair_states())
def test_no_two_damaging_steps_raise_the_score(
    registry: TaskRegistry, task_id: str, k: int
) -> None:
    """From states without duplicates, any two damaging steps in a row never pay."""
    entry = _METADATA[task_id]
    prefix = entry["solution"][:k]
    start = play(registry, task_id, None, prefix)
    assert start.observation().duplicate_count == 0
    before = start.reward.total
    every = [d for d in damaging_actions(start, entry) if d.kind != "refused"]
    # One action of each kind and operation keeps the pairs affordable.
    chosen = list({(d.kind, d.operation): d for d in reversed(every)}.values())
    assert len(chosen) >= 4

    violations = []
    for first in chosen:
        for second in chosen:
            episode = play(registry, task_id, None, prefix)
            apply_damage(episode, first)
            if episode.done:
                continue
            apply_damage(episode, second)
            if episode.reward.total > before:
                violations.append(f"{first} then {second}: {before} -> {episode.reward.total}")
    assert not violations, "\n".join(violations)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_refused_steps_change_nothing_and_cost_nothing(
    registry: TaskRegistry, task_id: str
) -> None:
    entry = _METADATA[task_id]
    plan = entry["solution"]
    episode = new_episode(registry, task_id, None)
    refused = [
        ("no_such_op", {}),
        ("fill_missing", {"strategy": "nope"}),
        ("fill_missing", {"value": 1}),
        ("fill_missing_mean", {"strategy": "median"}),
        ("fix_dtype", {"dtype": "int", "column": 5}),
        ("remove_duplicates", {"subset": "x"}),
        ("rename_columns", {"mapping": {"x_nope": "y"}}),
        ("remove_outliers", {"threshold": "2"}),
        ("validate_schema", {"x": 1}),
        ("finish", {"now": True}),
    ]
    for upto, action in enumerate(plan[:-1]):
        # Refusals have an allowance of max_steps per episode (then it ends, truncated):
        # check them in batches, each on a copy of the episode at this point of the plan.
        for batch in (refused[:5], refused[5:]):
            probe = new_episode(registry, task_id, None)
            for done in plan[:upto]:
                probe.step(Action(**done))
            for operation, parameters in batch:
                before = Fingerprint.of(probe)
                with pytest.raises(EnvError):
                    step(probe, operation, parameters)
                before.assert_same(probe)
        episode.step(Action(**action))
    result = episode.step(Action(**plan[-1]))
    assert result.reward.total == 0.9999
    assert result.observation.step == len(plan)


def test_operation_not_allowed_is_refused(registry: TaskRegistry) -> None:
    episode = new_episode(registry, "easy_dedup_rename", None)
    before = Fingerprint.of(episode)
    with pytest.raises(EnvError) as info:
        step(episode, "remove_outliers", {})
    assert info.value.code == "OPERATION_NOT_ALLOWED"
    before.assert_same(episode)


def test_finished_episode_refuses_steps(registry: TaskRegistry) -> None:
    episode = new_episode(registry, "easy_dedup_rename", None)
    step(episode, "finish", {})
    before = Fingerprint.of(episode)
    with pytest.raises(EnvError) as info:
        step(episode, "validate_schema", {})
    assert info.value.code == "EPISODE_FINISHED"
    before.assert_same(episode)


def test_step_budget_ends_the_episode(registry: TaskRegistry) -> None:
    episode = new_episode(registry, "easy_dedup_rename", None)
    for i in range(10):
        result = step(episode, "validate_schema", {})
        assert result.done == (i == 9)
    # 9 identical repeats cost 0.18, and using more than 8 of 10 steps 0.05.
    assert result.reward.penalty == 0.23
    with pytest.raises(EnvError):
        step(episode, "validate_schema", {})


# ── (d) order matters ───────────────────────────────────────────────────────


def test_filling_before_removing_duplicates_scores_lower(
    registry: TaskRegistry, metadata: dict[str, dict]
) -> None:
    plan = metadata["expert_sales_pipeline"]["solution"]
    assert [a["operation"] for a in plan[:5]] == [
        "remove_duplicates",
        "rename_columns",
        "fill_missing",
        "fill_missing",
        "fill_missing",
    ]
    optimal = play(registry, "expert_sales_pipeline", None, plan).reward
    fill_first = [plan[1], *plan[2:5], plan[0], *plan[5:]]
    worse = play(registry, "expert_sales_pipeline", None, fill_first).reward
    assert optimal.total == 0.9999
    assert worse.total < optimal.total
    # Not only the out-of-order penalty: duplicates distort the averages, so the fills
    # themselves are wrong.
    assert worse.penalty == 0.08
    assert worse.missing_score < 0.9
    assert worse.total < optimal.total - 0.08
    assert worse.duplicate_score == 0.9999
    # Skipping deduplication altogether is worse still on duplicates.
    no_dedup = play(registry, "expert_sales_pipeline", None, [*plan[1:5], *plan[5:]]).reward
    assert no_dedup.duplicate_score == 0.0001
    assert no_dedup.total < optimal.total


# ── (e) datasets are up to date ─────────────────────────────────────────────


def test_committed_datasets_are_up_to_date() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_datasets.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "up to date" in completed.stdout


# ── (f) determinism ─────────────────────────────────────────────────────────


def _run_script(
    registry: TaskRegistry, task_id: str, seed: int | None, actions: list[tuple[str, dict]]
) -> list[Any]:
    episode = new_episode(registry, task_id, seed, episode_id="same-id")
    trace: list[Any] = [episode.observation().model_dump(), episode.reward.model_dump()]
    for operation, parameters in actions:
        try:
            trace.append(step(episode, operation, parameters).model_dump())
        except EnvError as error:
            trace.append(("refused", error.code, error.detail))
            trace.append(episode.result(error).model_dump())
    trace.append(episode.state().model_dump())
    return trace


@pytest.mark.parametrize("seed", [None, 3])
@pytest.mark.parametrize("task_id", TASK_IDS)
def test_same_task_seed_and_actions_give_identical_results(
    registry: TaskRegistry, metadata: dict[str, dict], task_id: str, seed: int | None
) -> None:
    plan = [(a["operation"], a["parameters"]) for a in metadata[task_id]["solution"]]
    actions = [
        ("validate_schema", {}),
        ("fill_missing", {"strategy": "mode"}),
        ("fix_dtype", {"dtype": "int"}),  # usually refused
        ("no_such_op", {}),
        ("rename_columns", {"mapping": {"x_nope": "y"}}),
        ("fill_missing", {"strategy": "ffill"}),
        *plan,
    ]
    first = _run_script(registry, task_id, seed, actions)
    second = _run_script(registry, task_id, seed, actions)
    assert first == second
    assert first[-1]["episode_id"] == "same-id"
