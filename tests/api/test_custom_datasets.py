"""Bring-your-own datasets: folders become tasks through EXTRA_DATASETS, graded by repair,
preservation and row integrity; bad folders are reported and skipped, never fatal."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from dataclean_env.episode import Episode
from dataclean_env.errors import InvalidParameters
from dataclean_env.grading.preservation import PreservationGrader
from dataclean_env.schemas import Action
from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings
from dataclean_env.snapshot import Snapshot
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
    assert registry.task_ids() == [*ALL_TASK_IDS, "contacts"]
    spec = registry.spec("contacts")
    assert (spec.family, spec.max_steps, spec.protected_columns) == ("custom", 20, {"contact_id"})
    episode = Episode("c", registry.make("contacts", 3))
    # Doing nothing earns what the preserved cells are worth (and the row integrity).
    assert episode.reward.model_dump() == {
        "total": 0.4,
        "repair_score": 0.0001,
        "preservation_score": 0.9999,
        "row_integrity_score": 0.9999,
        "penalty": 0.0001,
    }
    totals = [episode.step(Action(**a)).reward.total for a in CONTACTS_PLAN]
    # 15 cells to repair; the rename alone makes 3 of them right (names already clean).
    assert totals == [0.52, 0.9999, 0.9999]


def test_grader_exact_values_on_a_hand_made_table() -> None:
    gold = pd.DataFrame(
        {"id": [1, 2, 3, 4], "name": ["Ana", "Bo", "Cy", "Di"], "n": [1.0, 2.0, 3.0, 4.0]}
    )
    dirty = pd.DataFrame(
        {
            "id": [1, 2, 3, 3, 4],
            "name": ["ana", "Bo", "Cy", "Cy", "Di"],
            "n": ["1", "x", "3", "3", None],
        }
    )
    grader = PreservationGrader.for_task(dirty, gold, "id")
    # To repair: the name of 1 and every n (text, not yet numbers): 5 cells; to preserve: 3.
    assert (len(grader.to_repair), len(grader.to_preserve)) == (5, 3)

    def scores(table: pd.DataFrame) -> dict[str, float]:
        return grader.components(Snapshot.of(table))

    assert scores(dirty) == {
        "repair_score": 0.0,
        "preservation_score": 1.0,
        "row_integrity_score": 1 - 1 / 9,  # one extra row of 5 submitted + 4 expected
    }
    assert scores(gold) == {
        "repair_score": 1.0,
        "preservation_score": 1.0,
        "row_integrity_score": 1.0,
    }
    damaged = gold.drop(index=[1]).assign(name=["Ana", "Cy", "XX"])  # lose row 2, break Di
    assert scores(damaged) == {
        "repair_score": 4 / 5,  # row 2's n is gone with its row
        "preservation_score": 1 / 3,  # Bo's name gone, Di's name broken
        "row_integrity_score": 1 - 1 / 7,
    }
    as_text = gold.assign(n=["1", "2", "3", "4"])  # right digits, wrong type
    assert scores(as_text)["repair_score"] == 1 / 5
    shuffled = gold.iloc[[3, 1, 0, 2]].reset_index(drop=True)
    assert scores(shuffled) == scores(gold)
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
    episode.step(Action(operation="strip", parameters={"column": "name"}))
    episode.step(Action(operation="replace_missing", parameters={"tokens": ["n/a"]}))
    # The clean file's age is a number column: the text must also become numbers.
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
    assert episode.reward.total == round(0.2 * (1000 / 1000) + 0.2, 4)
    episode.step(Action(operation="strip"))
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
    "easy_dedup_rename": ("a\n1\n", "a\n1\n", None, "already taken"),
    "bad name!": ("a\n1\n", "a\n1\n", None, "folder name"),
}


def test_bad_folders_are_reported_and_skipped_and_the_server_still_serves(tmp_path) -> None:
    parent = tmp_path / "mixed"
    for name, (dirty, clean, task, _) in BAD_FOLDERS.items():
        write(parent / name, dirty, clean, task)
    write(parent / "good", "id,a\n1, x\n", "id,a\n1,x\n", '{"key": "id"}')
    (parent / "stray.txt").write_text("not a folder")
    missing = tmp_path / "nowhere"
    settings = Settings(extra_datasets=os.pathsep.join([str(parent), str(missing)]))
    registry = registry_for(settings)
    assert registry.task_ids() == [*ALL_TASK_IDS, "good"]
    problems = registry.problems
    for name, (*_, reason) in BAD_FOLDERS.items():
        assert any(p.startswith(str(parent / name)) and reason in p for p in problems), name
    assert any(p.startswith(str(missing)) and "is not a folder" in p for p in problems)
    with TestClient(create_app(settings)) as client:
        assert client.get("/health").json() == {
            "status": "healthy",
            "tasks_loaded": len(ALL_TASK_IDS) + 1,
        }
        listed = {t["task_id"]: t for t in client.get("/tasks").json()["tasks"]}
        assert listed["good"]["family"] == "custom"
        assert listed["good"]["scoring"] == {
            "repair_score": 0.6,
            "preservation_score": 0.2,
            "row_integrity_score": 0.2,
        }
        body = client.post("/reset/good", json={"episode_id": "g"}).json()
        assert body["reward"] == {
            "total": 0.4,
            "repair_score": 0.0001,
            "preservation_score": 0.9999,
            "row_integrity_score": 0.9999,
            "penalty": 0.0001,
        }
        step = client.post("/step/good", json={"episode_id": "g", "operation": "strip"}).json()
        assert step["reward"]["total"] == 0.9999


def test_extra_datasets_is_read_from_the_environment(tmp_path, monkeypatch) -> None:
    write(tmp_path / "one" / "t1", "k,a\n1,x\n", "k,a\n1,x\n", '{"key": "k"}')
    write(tmp_path / "two" / "t2", "k,a\n1,x\n", "k,a\n1,x\n", '{"key": "k"}')
    monkeypatch.setenv(
        "EXTRA_DATASETS", os.pathsep.join([str(tmp_path / "one"), str(tmp_path / "two")])
    )
    assert registry_for(Settings()).task_ids()[-2:] == ["t1", "t2"]
