"""The corpus family (tasks/corpus.py, corpus/): real tables whose dirty versions are a
seeded mix of tab-err error layers, each table carded with its licence and source, served
in train / eval / test and secret splits and graded by net repair (cell-repair F1 reported)."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import pandas as pd
import pytest

from dataclean_env.corpus import instances, tables
from dataclean_env.corpus.tables import load_card, load_table, table_names
from dataclean_env.engine.episode import Episode
from dataclean_env.errors import InvalidAction
from dataclean_env.generation import instance_rng, secret_rng
from dataclean_env.generation.noise import pick_difficulty
from dataclean_env.schemas import Action
from dataclean_env.tasks import corpus
from dataclean_env.tasks.corpus import CorpusFamily, secret_task
from tests.support import CORPUS_TABLES

SECRET = b"a-test-secret-of-some-length"


def errors(made: instances.Instance) -> dict[tuple[int, str], str]:
    """(row_id, column) -> dirty text of every cell the grader counts wrong: one that
    differs from the clean text, and every cell of a row the clean table lacks."""
    clean = made.clean.set_index("row_id").fillna("")
    dirty = made.dirty.set_index("row_id").fillna("")
    return {
        (int(row_id), column): dirty.at[row_id, column]
        for row_id in dirty.index
        for column in clean.columns
        if row_id not in clean.index or dirty.at[row_id, column] != clean.at[row_id, column]
    }


def table_text(task) -> str:
    return task.dirty.to_csv(index=False)


def test_six_tables_of_different_domains_each_carded_with_licence_and_source() -> None:
    assert table_names() == CORPUS_TABLES
    domains = set()
    for name in CORPUS_TABLES:
        card = load_card(name)
        assert 1_000 <= card["rows"] <= 50_000, name
        assert card["licence"] and card["origin"] and card["title"], name
        assert set(card["source"]) == {"package", "version", "file", "sha256"}, name
        assert card["generator"] == {"package": "tab-err", "version": "0.2.1"}, name
        folder = tables.TABLES_DIR / name
        clean = (folder / "clean.csv").read_bytes()
        assert hashlib.sha256(clean).hexdigest() == card["clean_sha256"], name
        table = load_table(name)
        assert list(table.clean.columns) == card["columns"] and len(table.clean) == card["rows"]
        domains.add(card["domain"].split(":")[0])
    assert domains == {"aviation", "geography", "meteorology", "air traffic",
                       "demography and economics", "climate"}  # fmt: skip


def test_the_layers_cover_tab_errs_error_types() -> None:
    kinds = {
        (layer["error_type"], "missing_value" in layer["config"])
        for name in CORPUS_TABLES
        for layer in load_card(name)["layers"]
    }
    assert kinds == {
        ("CaseVariant", False),  # ours (integrations/corpus/own_errors.py)
        ("ColumnSwap", False),  # ours: two columns' values exchanged
        ("Duplicate", False),  # ours: an exact copy of a row
        ("ConflictingSources", False),  # ours: three reports of one entity that disagree
        ("Typo", False),
        ("Extraneous", False),
        ("MissingValue", False),  # explicit: an empty cell
        ("MissingValue", True),  # implicit: N/A, -1
        ("CategorySwap", False),  # another category: breaks dependencies on other columns
        ("Outlier", False),
        ("AddDelta", False),
        ("WrongUnit", False),
        ("Permutate", False),  # date parts reordered
        ("Replace", False),  # date separators changed, a space doubled inside text
    }
    ours = {"CaseVariant", "ColumnSwap", "Duplicate", "ConflictingSources"}
    for name in CORPUS_TABLES:  # every table has every class tab-err lacks
        layers = load_card(name)["layers"]
        assert {layer["error_type"] for layer in layers if layer["generator"] == "corpus"} == ours
        assert all(layer["cells"] > 0 for layer in layers)
    mechanisms = {
        layer["mechanism"].split(":")[0]
        for name in CORPUS_TABLES
        for layer in load_card(name)["layers"]
    }
    assert mechanisms == {"ECAR", "EAR", "ENAR"}
    # tab-err's Mojibake re-encodes text, which leaves ASCII as it was: these tables are
    # ASCII, so the build drops its layers (no cell differs); the card lists none.


def test_a_table_changed_without_a_rebuild_is_refused(tmp_path: Path, monkeypatch) -> None:
    shutil.copytree(tables.TABLES_DIR / "gapminder", tmp_path / "gapminder")
    clean = tmp_path / "gapminder" / "clean.csv"
    clean.write_text(clean.read_text().replace("Afghanistan", "Afganistan", 1))
    monkeypatch.setattr(tables, "TABLES_DIR", tmp_path)
    load_table.cache_clear()
    load_card.cache_clear()
    try:
        with pytest.raises(ValueError, match="does not match the sha256 its card pins"):
            load_table("gapminder")
    finally:
        load_table.cache_clear()
        load_card.cache_clear()


def test_every_wrong_cell_is_the_first_chosen_layers_value_and_added_rows_follow_theirs() -> None:
    table = load_table("gapminder")
    seed = next(  # an instance with a layer adding rows
        seed
        for seed in range(100)
        if any(
            table.card["layers"][layer]["column"] is None
            for layer in instances.compose(table, random.Random(seed)).layers
        )
    )
    made = instances.compose(table, random.Random(seed))
    row_ids = list(made.clean["row_id"])  # clean row -> its key in the instance
    expected: dict[tuple[int, str], str] = {}
    added: dict[int, list[dict[str, str]]] = {}
    for layer in made.layers:
        copies: dict[tuple[int, int], dict[str, str]] = {}
        for row, copy, column, value in table.layers[layer]:
            if copy:
                copies.setdefault((row, copy), {})[column] = value
            else:
                expected.setdefault((row_ids[row], column), value)
        for (row, _), cells in copies.items():
            added.setdefault(row, []).append(cells)
    for row, rows in added.items():
        for offset, cells in enumerate(rows, start=1):
            for column, value in cells.items():
                expected[(row_ids[row] + offset, column)] = value
    assert added and errors(made) == expected
    assert list(made.dirty["row_id"]) == list(range(1, len(table.clean) + 1 + sum(
        len(rows) for rows in added.values())))  # fmt: skip
    assert len(made.layers) == len(set(made.layers))
    low, high = instances.LAYERS_PER_DIFFICULTY[made.difficulty]
    assert low <= len(made.layers) <= high


def test_instances_are_seeded_per_split_and_the_secret_split_by_the_secret() -> None:
    family = CorpusFamily()
    train = family.make("corpus_airports", 2, "train")
    again = family.make("corpus_airports", 2, "train")
    pd.testing.assert_frame_equal(train.dirty, again.dirty)
    assert table_text(train) != table_text(family.make("corpus_airports", 2, "eval"))
    assert table_text(train) != table_text(family.make("corpus_airports", 3, "train"))
    ours = secret_task("corpus_airports", SECRET, 3)
    assert (ours.split, ours.seed) == ("secret", None)
    assert table_text(ours) == table_text(secret_task("corpus_airports", SECRET, 3))
    assert table_text(ours) != table_text(secret_task("corpus_airports", b"another", 3))
    with pytest.raises(InvalidAction, match="split must be one of train, eval, test"):
        family.make("corpus_airports", 0, "secret")


def test_an_episode_is_graded_cell_by_cell_and_the_labelled_variant_offers_labels() -> None:
    task = CorpusFamily().make("corpus_seattle_weather", 1, "test")
    assert task.spec.family == "corpus" and task.spec.protected_columns == {"row_id"}
    assert task.spec.version == "corpus_seattle_weather-v3"
    made = corpus.compose(
        "corpus_seattle_weather", instance_rng("corpus_seattle_weather", "test", 1)
    )
    pd.testing.assert_frame_equal(made.dirty, task.dirty)
    wrong = errors(made)
    clean_rows = made.clean.set_index("row_id")
    (row_id, column), _ = next(
        cell for cell in sorted(wrong.items()) if cell[0][0] in clean_rows.index
    )
    clean = clean_rows.at[row_id, column]
    episode = Episode("c", task)
    result = episode.step(
        Action(
            operation="set_cell", parameters={"row_id": row_id, "column": column, "value": clean}
        )
    )
    assert result.info["repair"] == {
        "precision": 1.0,
        "recall": 1 / len(wrong),
        "f1": 2 / (1 + len(wrong)),
        "cells_changed": 1,
    }
    labelled = CorpusFamily().make("corpus_seattle_weather-labelled", 1, "test")
    assert (labelled.spec.label_budget, labelled.spec.operations[-1]) == (20, "label")
    pd.testing.assert_frame_equal(labelled.dirty, task.dirty)
    assert "label" not in task.spec.operations


def test_the_listing_reads_only_the_cards() -> None:
    specs = {s.task_id: s for s in CorpusFamily().specs()}
    assert list(specs) == [
        i for t in CORPUS_TABLES for i in (f"corpus_{t}", f"corpus_{t}-labelled")
    ]
    planes = specs["corpus_planes"]
    assert (planes.difficulty, planes.max_steps, planes.cells) == ("real", 30, 3322 * 10)
    card = json.loads((tables.TABLES_DIR / "planes" / "card.json").read_text())
    assert card["licence"] in planes.description and card["origin"] in planes.description
    assert list(specs)[::2] == corpus.TASK_IDS


def test_an_instance_draws_its_difficulty_first_as_every_generator_does() -> None:
    """So the suite can tell a secret instance's difficulty without composing it
    (`benchmark.suite.secret_difficulty`)."""
    for index in range(6):
        rng = secret_rng(SECRET, "corpus_planes", index)
        expected = pick_difficulty(rng)[0]
        assert secret_task("corpus_planes", SECRET, index).spec.difficulty == expected
