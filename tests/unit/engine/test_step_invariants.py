"""Issue 11, engine side: a step commits only if its result can be served, within its limits.

* Every operation: a failure after the operation ran (grading, the observation, the
  answer) rolls the whole step back, and the episode still serves afterwards.
* Text that is not valid Unicode (a lone surrogate) never enters an episode, at any door.
* One step's engine time is bounded, a whole program included (the issue's exact payload).
* Cells, tables and an action's parameters are bounded in size.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import (
    InvalidParameters,
    InvalidText,
    OperationFailed,
    StepTimeLimit,
    TooLarge,
)
from dataclean_env.in_process import DataCleaningEnv
from dataclean_env.operations import operation_names
from dataclean_env.operations.claims import CLAIM_OPERATIONS
from dataclean_env.schemas import Action
from dataclean_env.settings import Settings
from dataclean_env.table.limits import EngineLimits
from dataclean_env.tasks import TaskRegistry, registry_for
from tests.support import EXAMPLES

# One valid action per operation, on a task that allows it (checked by the test itself).
EVERY_OPERATION: list[tuple[str, str, dict[str, Any]]] = [
    ("clamp_outliers", "numbers", {"column": "price", "low": 0, "high": 10}),
    ("decimal2", "numbers", {"column": "price"}),
    ("dedupe", "contacts", {"keys": ["email"]}),
    ("drop_rows", "contacts", {"row_ids": [3]}),
    ("fd_repair", "orders", {"key": "customer_id", "column": "customer_name"}),
    ("fill_missing", "hard_full_pipeline", {"strategy": "median"}),
    ("finish", "contacts", {}),
    ("fix_dtype", "hard_full_pipeline", {"dtype": "auto"}),
    ("lower", "contacts", {"column": "city"}),
    ("map", "contacts", {"column": "city", "mapping": {"NYC": "New York"}}),
    ("normalize_dates", "contacts", {"column": "signup_date", "convention": "us"}),
    ("phone_us", "contacts", {"column": "phone"}),
    ("program", "contacts", {"operations": [{"operation": "strip"}, {"operation": "title"}]}),
    ("regex_replace", "contacts", {"column": "city", "pattern": "^NYC$", "replacement": "NY"}),
    ("remove_duplicates", "hard_full_pipeline", {}),
    ("remove_outliers", "hard_full_pipeline", {"column": "price"}),
    ("rename_columns", "contacts", {"mapping": {"Full Name": "full_name"}}),
    ("replace", "contacts", {"column": "city", "old_value": "NYC", "new_value": "New York"}),
    ("replace_missing", "contacts", {"tokens": ["N/A"]}),
    ("set_cell", "contacts", {"row_id": 3, "column": "email", "value": "chen@example.com"}),
    (
        "set_cells",
        "contacts",
        {"cells": [{"row_id": 3, "column": "email", "value": "chen@example.com"}]},
    ),
    ("query", "contacts", {"sql": "SELECT city, count(*) AS n FROM t GROUP BY city ORDER BY city"}),
    ("show_rows", "contacts", {"offset": 2, "limit": 3}),
    ("value_counts", "contacts", {"column": "city", "by": "shape"}),
    ("find_rows", "contacts", {"column": "city", "pattern": "^B"}),
    ("label", "rayyan-labelled", {"row_ids": [235295]}),
    ("sql", "contacts", {"sql": "UPDATE t SET email = 'chen@example.com' WHERE contact_id = 3"}),
    ("strip", "contacts", {}),
    ("title", "contacts", {"column": "city"}),
    ("upper", "contacts", {"column": "city"}),
    ("validate_schema", "contacts", {}),
]


def custom_folder(
    root: Path, name: str, table: pd.DataFrame, config: str = '{"key": "id"}'
) -> None:
    folder = root / name
    folder.mkdir()
    table.to_csv(folder / "dirty.csv", index=False)
    table.to_csv(folder / "clean.csv", index=False)
    (folder / "task.json").write_text(config)


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> TaskRegistry:
    """The example custom task `contacts`, the built-in tasks, `numbers` (a number column
    for clamp_outliers and decimal2) and `redos`: 20 cells of "a"*350+"!", the issue's
    catastrophic-backtracking payload for `(a+)+$`."""
    root = tmp_path_factory.mktemp("datasets")
    numbers = pd.DataFrame({"id": [1, 2, 3], "price": [1.234, 25.5, 3.0], "name": list("abc")})
    custom_folder(root, "numbers", numbers, '{"key": "id", "types": {"price": "float"}}')
    custom_folder(root, "redos", pd.DataFrame({"id": range(1, 21), "t": ["a" * 350 + "!"] * 20}))
    return registry_for(Settings(extra_datasets=os.pathsep.join([str(EXAMPLES), str(root)])))


def numeric(task: Any) -> Any:
    """Custom tables load as text; `numbers` stands for a table whose price is a number."""
    if task.spec.task_id != "numbers":
        return task
    return dataclasses.replace(task, dirty=task.dirty.astype({"price": float}))


def served(episode: Episode) -> tuple[str, str]:
    """Everything a client can read of the episode, as the bytes it would be sent, but the
    refusal count (a refusal counts against the allowance and changes nothing else)."""
    result = episode.result()
    result.info.pop("refusals")
    return result.model_dump_json(), episode.state().model_dump_json()


class ExplodingGrader:
    """The task's grader, failing on demand: a fault after the operation has run."""

    def __init__(self, grader: Any):
        self.grader = grader
        self.armed = True

    def components(self, snapshot: Any) -> Any:
        if self.armed:
            raise RuntimeError("injected fault in grading")
        return self.grader.components(snapshot)

    def combine(self, *args: Any) -> Any:
        if self.armed:
            raise RuntimeError("injected fault in grading")
        return self.grader.combine(*args)

    def __getattr__(self, name: str) -> Any:  # everything else the grader offers
        return getattr(self.grader, name)


def test_the_table_covers_every_operation() -> None:
    # Every cleaning operation; the claim operations (detection, audit) are covered by
    # tests/unit/tasks/test_claim_families.py, which checks their refusals change nothing.
    assert sorted(name for name, _, _ in EVERY_OPERATION) == sorted(
        set(operation_names()) - CLAIM_OPERATIONS
    )


@pytest.mark.parametrize(("name", "task_id", "parameters"), EVERY_OPERATION)
def test_a_failure_after_the_operation_rolls_the_step_back(
    tasks: TaskRegistry, name: str, task_id: str, parameters: dict[str, Any]
) -> None:
    action = Action(operation=name, parameters=parameters)
    control = Episode("control", numeric(tasks.make(task_id, seed=0)))
    expected = control.step(action).model_dump_json()  # the action is valid here

    episode = Episode("control", numeric(tasks.make(task_id, seed=0)))
    grader = ExplodingGrader(episode.task.grader)
    episode.task = dataclasses.replace(episode.task, grader=grader)
    before = served(episode)
    with pytest.raises(OperationFailed, match="nothing changed"):
        episode.step(action)
    assert served(episode) == before  # rolled back: not one byte differs
    assert episode.step_count == 0 and not episode.done

    grader.armed = False  # the episode still serves, and the same step now commits
    assert episode.step(action).model_dump_json() == expected


SURROGATE = "x\ud800"


@pytest.mark.parametrize(
    ("task_id", "name", "parameters"),
    [
        ("contacts", "set_cell", {"row_id": 3, "column": "email", "value": SURROGATE}),
        (
            "contacts",
            "set_cells",
            {"cells": [{"row_id": 3, "column": "email", "value": SURROGATE}]},
        ),
        ("contacts", "map", {"column": "city", "mapping": {"NYC": SURROGATE}}),
        ("contacts", "map", {"column": "city", "mapping": {SURROGATE: "x"}}),  # matches nothing
        ("contacts", "replace", {"column": "city", "old_value": "NYC", "new_value": SURROGATE}),
        ("contacts", "rename_columns", {"mapping": {"city": SURROGATE}}),
        ("contacts", "regex_replace", {"column": "city", "pattern": "C", "replacement": SURROGATE}),
        ("contacts", "fill_missing", {"strategy": "constant", "value": SURROGATE}),
        ("medium_missing_dtype", "fill_missing", {"strategy": "constant", "value": SURROGATE}),
    ],
)
def test_invalid_unicode_never_enters_an_episode(
    tasks: TaskRegistry, task_id: str, name: str, parameters: dict[str, Any]
) -> None:
    episode = Episode("e", tasks.make(task_id, seed=0))
    before = served(episode)
    # pydantic refuses some such strings itself (a str field with a length limit)
    error = InvalidParameters if name in ("regex_replace", "set_cells") else InvalidText
    with pytest.raises(error, match=r"[Uu]nicode"):
        episode.step(Action(operation=name, parameters=parameters))
    assert served(episode) == before
    episode.step(Action(operation="finish"))  # still serves


def test_in_process_door_refuses_invalid_unicode_without_raising() -> None:
    env = DataCleaningEnv("medium_missing_dtype")
    before = env.reset().model_dump_json()
    result = env.step(
        {"operation": "fill_missing", "parameters": {"strategy": "constant", "value": SURROGATE}}
    )
    assert result.info["error"]["code"] == "INVALID_TEXT"
    assert env.state().step_count == 0
    assert env.step({"operation": "validate_schema"}).observation.step == 1
    assert before  # the reset answer was servable


# ── engine time ──────────────────────────────────────────────────────────────


REDOS = {"column": "t", "pattern": "(a|aa)+$", "replacement": "x"}  # exponential in `regex`


@pytest.mark.parametrize(
    "action",
    [
        Action(operation="regex_replace", parameters=REDOS),
        Action(
            operation="program",
            parameters={"operations": [{"operation": "regex_replace", "parameters": REDOS}] * 20},
        ),
    ],
    ids=["regex_replace", "program_of_20"],
)
def test_one_step_is_bounded_by_the_step_time_limit(tasks: TaskRegistry, action: Action) -> None:
    limits = EngineLimits(step_seconds=0.1)  # the bound is what is checked, not its size
    episode = Episode("redos", tasks.make("redos", seed=0), limits)
    before = served(episode)
    started = time.monotonic()
    with pytest.raises(StepTimeLimit, match="longer than its engine time limit"):
        episode.step(action)
    elapsed = time.monotonic() - started
    # Unbounded, the pattern would backtrack for longer than the machine lives; bounded, the
    # step ends near its 0.1 s. The verdict's bound is far from both, so no machine's speed
    # or load decides it.
    assert elapsed < 60, elapsed
    assert served(episode) == before


# ── sizes ────────────────────────────────────────────────────────────────────


def test_cell_and_table_and_parameter_sizes_are_bounded(tasks: TaskRegistry) -> None:
    limits = EngineLimits(max_cell_chars=100, max_table_chars=2_000, max_action_bytes=1_000)
    episode = Episode("sizes", tasks.make("contacts", seed=0), limits)
    before = served(episode)

    def refused(name: str, parameters: dict[str, Any], match: str) -> None:
        with pytest.raises(TooLarge, match=match):
            episode.step(Action(operation=name, parameters=parameters))
        assert served(episode) == before

    refused("set_cell", {"row_id": 3, "column": "email", "value": "e" * 101}, "at most 100")
    # a regex that multiplies every character: cells and the table would outgrow the limits
    refused(
        "regex_replace", {"column": "city", "pattern": ".", "replacement": "x" * 30}, "at most 100"
    )
    refused("map", {"column": "city", "mapping": {f"k{i}": "v" for i in range(200)}}, "1000")
    ok = episode.step(
        Action(
            operation="set_cell", parameters={"row_id": 3, "column": "email", "value": "e" * 100}
        )
    )
    assert ok.observation.step == 1


def test_table_text_limit(tasks: TaskRegistry) -> None:
    start = Episode("t", tasks.make("contacts", seed=0))
    text = sum(len(v) for col in start.snapshot.values.values() for v in col if isinstance(v, str))
    episode = Episode("t", tasks.make("contacts", seed=0), EngineLimits(max_table_chars=text + 50))
    step = Action(
        operation="set_cell", parameters={"row_id": 3, "column": "email", "value": "e" * 40}
    )
    episode.step(step)  # N/A (3 chars) -> 40 chars: +37, within the limit
    with pytest.raises(TooLarge, match="characters of text"):
        episode.step(
            Action(
                operation="set_cell", parameters={"row_id": 5, "column": "email", "value": "e" * 90}
            )
        )
    assert episode.step_count == 1
