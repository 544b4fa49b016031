"""Column profiles: exact counts, top values, shapes and ranges from the agent's own table,
reused for untouched columns, and carried in every observation."""

from __future__ import annotations

import pandas as pd

from dataclean_env.engine.episode import Episode
from dataclean_env.schemas import Action
from dataclean_env.table.profiles import column_profiles, value_shape
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.tasks import default_registry


def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [1, 2, 3, 4, 5, 6],
            "when": ["3/14/2024", "12/1/2024", None, "3/14/2024", "2024-01-05", "3/14/2024"],
            "price": [9.5, None, 120.0, 9.5, 3.25, 9.5],
            "name": ["Ana", "ana", "Bo", "Ana", "x" * 50, None],
        }
    ).astype({"when": "object", "name": "object"})


def test_value_shapes_map_digits_and_letters() -> None:
    assert value_shape("3/14/2024") == "9/99/9999"
    assert value_shape("Ab-12 x") == "Aa-99 a"
    assert value_shape(12.5) == "99.9"
    assert value_shape("+1 (555) 010-9999") == "+9 (999) 999-9999"
    assert value_shape("a" * 30) == "a" * 23 + "…"


def test_profiles_count_values_shapes_and_ranges() -> None:
    profiles = column_profiles(Snapshot.of(table()))
    assert profiles["id"] == {
        "non_null": 6,
        "distinct": 6,
        "top_values": [[1, 1], [2, 1], [3, 1], [4, 1], [5, 1]],
        "min": 1,
        "max": 6,
    }
    assert profiles["when"] == {
        "non_null": 5,
        "distinct": 3,
        "top_values": [["3/14/2024", 3], ["12/1/2024", 1], ["2024-01-05", 1]],
        "shapes": [["9/99/9999", 3], ["99/9/9999", 1], ["9999-99-99", 1]],
    }
    assert profiles["price"] == {
        "non_null": 5,
        "distinct": 3,
        "top_values": [[9.5, 3], [120.0, 1], [3.25, 1]],
        "min": 3.25,
        "max": 120.0,
    }
    assert profiles["name"] == {
        "non_null": 5,
        "distinct": 4,
        "top_values": [["Ana", 2], ["ana", 1], ["Bo", 1], ["x" * 39 + "…", 1]],
        "shapes": [["Aaa", 2], ["aaa", 1], ["Aa", 1], ["a" * 23 + "…", 1]],
    }


def test_dates_report_their_range_as_text() -> None:
    frame = pd.DataFrame({"d": pd.to_datetime(["2024-02-01", None, "2023-12-31"])})
    assert column_profiles(Snapshot.of(frame))["d"] == {
        "non_null": 2,
        "distinct": 2,
        "top_values": [["2024-02-01", 1], ["2023-12-31", 1]],
        "min": "2023-12-31",
        "max": "2024-02-01",
    }


def test_untouched_columns_keep_their_profile_object() -> None:
    before = Snapshot.of(table())
    profiles = column_profiles(before)
    after = before.with_columns({"price": pd.Series([1.0] * 6)})
    again = column_profiles(after, (before, profiles))
    assert again["id"] is profiles["id"] and again["name"] is profiles["name"]
    assert again["price"] == {
        "non_null": 6,
        "distinct": 1,
        "top_values": [[1.0, 6]],
        "min": 1.0,
        "max": 1.0,
    }
    renamed = column_profiles(after.renamed(["key", "when", "price", "who"]), (after, again))
    assert renamed["key"] is again["id"] and renamed["who"] is again["name"]
    assert column_profiles(after.with_rows([0, 1]), (after, again))["name"]["non_null"] == 2


def test_observation_profiles_follow_the_table() -> None:
    episode = Episode("p", default_registry().make("easy_dedup_rename", None))
    first = episode.observation().column_profiles
    assert set(first) == set(episode.observation().columns)
    assert first == column_profiles(episode.snapshot)
    episode.step(Action(operation="remove_duplicates", parameters={}))
    after = episode.observation()
    assert after.column_profiles == column_profiles(episode.snapshot)
    assert after.column_profiles != first
    assert all(p["non_null"] <= after.shape[0] for p in after.column_profiles.values())
