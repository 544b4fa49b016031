"""Bring-your-own datasets: folders become tasks through EXTRA_DATASETS, graded by net
repair beside cell-repair precision, recall and F1 (grading/cell_repair.py; more in
tests/api/test_real_tables.py); bad folders are reported and skipped, never fatal."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import InvalidParameters
from dataclean_env.grading.cell_repair import CellRepairGrader
from dataclean_env.schemas import Action
from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.tasks import registry_for
from tests.support import ALL_TASK_IDS, EXAMPLES

ROOT = Path(__file__).resolve().parents[2]

CONTACTS_PLAN = [
    {"operation": "rename_columns", "parameters": {"mapping": {"Full Name": "full_name"}}},
    {
        "operation": "program",
        "parameters": {
            "operations": [
                {"operation": "strip"},
                {"operation": "title", "parameters": {"column": "full_name"}},
                {"operation": "replace_missing", "parameters": {"tokens": ["N/A"]}},
                {"operation": "phone_us", "parameters": {"column": "phone"}},
                {
                    "operation": "map",
                    "parameters": {
                        "column": "city",
                        "mapping": {"NYC": "New York", "boston": "Boston"},
                    },
                },
                {
                    "operation": "normalize_dates",
                    "parameters": {"column": "signup_date", "convention": "us"},
                },
            ]
        },
    },
    {"operation": "finish"},
]


def write(folder: Path, dirty: str, clean: str | None, task: str | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "dirty.csv").write_text(dirty, encoding="utf-8")
    if clean is not None:
        (folder / "clean.csv").write_text(clean, encoding="utf-8")
    if task is not None:
        (folder / "task.json").write_text(task, encoding="utf-8")
    return folder


def test_the_example_folder_is_a_task_that_the_documented_fixes_solve() -> None:
    registry = registry_for(Settings(extra_datasets=str(EXAMPLES)))
    assert registry.task_ids() == [*ALL_TASK_IDS, "contacts", "contacts-labelled"]
    spec = registry.spec("contacts")
    assert (spec.family, spec.max_steps, spec.protected_columns) == ("custom", 20, {"contact_id"})
    episode = Episode("c", registry.make("contacts", 3))
    # Doing nothing repairs nothing: every field at the floor.
    assert episode.reward.model_dump() == {
        "total": 0.0001,
        "net_repair": 0.0001,
        "precision": 0.0001,
        "recall": 0.0001,
        "f1": 0.0001,
        "penalty": 0.0001,
    }
    results = [episode.step(Action(**a)) for a in CONTACTS_PLAN]
    # 12 cells differ from the clean text (2 names, 1 email, 5 phones, 2 cities, 2 dates);
    # the rename is cosmetic and earns nothing; the program repairs all 12 and nothing else.
    assert [r.reward.total for r in results] == [0.0001, 0.9999, 0.9999]
    assert results[-1].info["repair"] == {
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "cells_changed": 12,
    }


def test_grader_exact_values_on_a_hand_made_table() -> None:
    gold = pd.DataFrame({"id": [1, 2, 3, 4], "name": ["Ana", "Bo", "Cy", "Di"], "n": list("1234")})
    dirty = pd.DataFrame(
        {
            "id": [1, 2, 3, 3, 4],
            "name": ["ana", "Bo", "Cy", "Cy", "Di"],
            "n": ["1", "x", "3", "3", None],
        }
    )
    grader = CellRepairGrader(dirty, gold, "id", {"id": "id", "name": "name", "n": "n"})
    # Errors: the name of 1, n of 2 and of 4 (3 cells), and the extra copy of row 3 (2 cells).
    assert grader.dirty_errors == 5

    def scores(table: pd.DataFrame) -> dict[str, float]:
        return grader.counts(Snapshot.of(table)).scores()

    assert scores(dirty) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert scores(gold) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    # Lose row 2 (its 2 cells change: Bo was right), break Di, fix nothing else.
    damaged = dirty.drop(index=[1]).reset_index(drop=True)
    damaged.loc[3, "name"] = "XX"
    counts = grader.counts(Snapshot.of(damaged))
    assert (counts.errors, counts.changed, counts.repaired) == (5, 3, 0)
    assert counts.net_repair == 0.0  # 3 wrong changes, no repair: the floor
    # Fix the name of 1 and drop the extra copy of 3: 3 repairs of 3 changes, of 5 errors.
    fixed = dirty.drop(index=[3]).reset_index(drop=True)
    fixed.loc[0, "name"] = "Ana"
    assert scores(fixed) == {"precision": 1.0, "recall": 3 / 5, "f1": 2 * 3 / (3 + 5)}
    assert grader.counts(Snapshot.of(fixed)).net_repair == 3 / 5
    shuffled = gold.iloc[[3, 1, 0, 2]].reset_index(drop=True)
    assert scores(shuffled) == scores(gold)
    renamed = gold.rename(columns={"name": "NAME", "n": "count"})
    assert scores(renamed) == scores(gold)  # headers are cosmetic
    reward = grader.reward(Snapshot.of(gold), [], 10)
    assert reward["total"] == 0.9999  # exactly 1.0 before the clamp


def test_folders_without_a_key_are_aligned_by_position(tmp_path) -> None:
    write(
        tmp_path / "people" / "plain", "name,age\n ana ,30\nBOB,N/A\n", "name,age\nana,30\nBOB,\n"
    )
    registry = registry_for(Settings(extra_datasets=str(tmp_path / "people")))
    episode = Episode("p", registry.make("plain"))
    assert episode.observation().columns == ["row_id", "name", "age"]
    assert episode.spec.protected_columns == {"row_id"}
    with pytest.raises(InvalidParameters, match="protected"):
        episode.step(Action(operation="fix_dtype", parameters={"column": "row_id", "dtype": "str"}))
    # Cells compare trimmed: " ana " is already right; only BOB's age "N/A" is wrong.
    assert episode.step(Action(operation="strip", parameters={"column": "name"})).info[
        "repair"
    ] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "cells_changed": 0}
    result = episode.step(Action(operation="replace_missing", parameters={"tokens": ["n/a"]}))
    assert result.reward.total == 0.9999
    # Without declared types a number is compared as the text it stands for.
    result = episode.step(
        Action(operation="fix_dtype", parameters={"column": "age", "dtype": "float"})
    )
    assert result.reward.total == 0.9999


def test_a_few_thousand_rows_load_and_step(tmp_path) -> None:
    rows = 3000
    dirty = pd.DataFrame(
        {"id": range(rows), "city": [" paris " if i % 3 else "Paris" for i in range(rows)]}
    )
    clean = pd.DataFrame({"id": range(rows), "city": ["Paris"] * rows})
    folder = tmp_path / "big" / "cities"
    folder.mkdir(parents=True)
    dirty.to_csv(folder / "dirty.csv", index=False)
    clean.to_csv(folder / "gold.csv", index=False)
    (folder / "task.json").write_text('{"key": "id"}')
    registry = registry_for(Settings(extra_datasets=str(tmp_path / "big")))
    episode = Episode("b", registry.make("cities", 1))
    assert episode.reward.total == 0.0001  # 2,000 cells read "paris", clean says "Paris"
    assert episode.step(Action(operation="strip")).info["repair"]["cells_changed"] == 0
    assert (
        episode.step(Action(operation="title", parameters={"column": "city"})).reward.total
        == 0.9999
    )


BAD_FOLDERS = {
    "no_clean": ("a\n1\n", None, None, "needs dirty.csv and clean.csv"),
    "bad_json": ("a\n1\n", "a\n1\n", "{not json", "task.json is not valid"),
    "unknown_option": ("a\n1\n", "a\n1\n", '{"colour": "red"}', "task.json is not valid"),
    "unknown_op": ("a\n1\n", "a\n1\n", '{"operations": ["teleport"]}', "unknown operation"),
    "rows_differ": ("a\n1\n2\n", "a\n1\n", None, "matched by position"),
    "key_missing": ("a\n1\n", "a\n1\n", '{"key": "id"}', "key column 'id' is not in dirty.csv"),
    "key_repeats": ("id,a\n1,x\n", "id,a\n1,x\n1,y\n", '{"key": "id"}', "must be unique"),
    "empty": ("a\n", "a\n", None, "has no rows"),
    "columns_differ": ("a,b\n1,2\n", "a\n1\n", None, "give task.json a `columns` map"),
    "bad_map": ("a,b\n1,2\n", "a\n1\n", '{"columns": {"b": "z"}}', "files lack: ['z']"),
    "bad_type": ("a\nx\n", "a\nx\n", '{"types": {"a": "int"}}', "declared int but holds 'x'"),
    "easy_dedup_rename": ("a\n1\n", "a\n1\n", None, "already taken"),
    "bad name!": ("a\n1\n", "a\n1\n", None, "folder name"),
}


def test_bad_folders_are_reported_and_skipped_and_the_server_still_serves(tmp_path) -> None:
    parent = tmp_path / "mixed"
    for name, (dirty, clean, task, _) in BAD_FOLDERS.items():
        write(parent / name, dirty, clean, task)
    write(parent / "good", "id,a\n1,X\n", "id,a\n1,x\n", '{"key": "id"}')
    (parent / "stray.txt").write_text("not a folder")
    missing = tmp_path / "nowhere"
    settings = Settings(extra_datasets=os.pathsep.join([str(parent), str(missing)]))
    registry = registry_for(settings)
    assert registry.task_ids() == [*ALL_TASK_IDS, "good", "good-labelled"]
    problems = registry.problems
    for name, (*_, reason) in BAD_FOLDERS.items():
        assert any(p.startswith(str(parent / name)) and reason in p for p in problems), name
    assert any(p.startswith(str(missing)) and "is not a folder" in p for p in problems)
    with TestClient(create_app(settings)) as client:
        assert client.get("/health").json() == {
            "status": "healthy",
            "tasks_loaded": len(ALL_TASK_IDS) + 2,  # the folder and its labelled variant
        }
        listed = {t["task_id"]: t for t in client.get("/tasks").json()["tasks"]}
        assert listed["good"]["family"] == "custom"
        assert listed["good"]["scoring"] == {"net_repair": 1.0}
        body = client.post("/reset/good", json={"episode_id": "g"}).json()
        assert body["reward"] == {
            "total": 0.0001,
            "net_repair": 0.0001,
            "precision": 0.0001,
            "recall": 0.0001,
            "f1": 0.0001,
            "penalty": 0.0001,
        }
        step = client.post("/step/good", json={"episode_id": "g", "operation": "lower"}).json()
        assert step["reward"]["total"] == 0.9999
        assert step["info"]["repair"] == {
            "precision": 1.0,
            "recall": 1.0,
            "f1": 1.0,
            "cells_changed": 1,
        }
        state = client.get("/state", params={"episode_id": "g"}).json()
        assert state["repair"] == step["info"]["repair"]


def test_extra_datasets_is_read_from_the_environment(tmp_path, monkeypatch) -> None:
    write(tmp_path / "one" / "t1", "k,a\n1,x\n", "k,a\n1,x\n", '{"key": "k"}')
    write(tmp_path / "two" / "t2", "k,a\n1,x\n", "k,a\n1,x\n", '{"key": "k"}')
    monkeypatch.setenv(
        "EXTRA_DATASETS", os.pathsep.join([str(tmp_path / "one"), str(tmp_path / "two")])
    )
    assert registry_for(Settings()).task_ids()[-4:] == ["t1", "t1-labelled", "t2", "t2-labelled"]
