"""Property test (hypothesis): no sequence of well-formed operations crashes or corrupts an
episode, on the fixed tasks, the generated families and a custom task that allows every
operation.

After every step, accepted or refused: the reward stays in range, the observation is JSON,
headers stay unique text, the episode's snapshot equals a fresh read of its table, and a
refused step left the episode exactly as it was.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.schemas import Action
from dataclean_env.settings import Settings
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.tasks import registry_for
from tests.support import EXAMPLES, GENERATED_IDS, TASK_IDS

REGISTRY = registry_for(Settings(extra_datasets=str(EXAMPLES)))
TASKS = [*TASK_IDS, "contacts", *GENERATED_IDS]
SCALARS = st.one_of(
    st.integers(-1000, 100_000),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.text(max_size=8),
    st.booleans(),
)


def action_for(draw: Any, columns: list[str], row_ids: list[Any]) -> dict[str, Any]:
    column = st.sampled_from(columns)
    row_id = st.one_of(st.sampled_from(row_ids or [0]), st.integers(-5, 5), st.text(max_size=4))
    some = st.lists(column, min_size=1, max_size=3, unique=True)
    choices = {
        "remove_duplicates": st.fixed_dictionaries({}, optional={"subset": some}),
        "dedupe": st.fixed_dictionaries({"keys": some}),
        "rename_columns": st.fixed_dictionaries(
            {},
            optional={
                "mapping": st.dictionaries(column, st.text(min_size=1, max_size=12), max_size=2)
            },
        ),
        "fill_missing": st.one_of(
            st.fixed_dictionaries(
                {"strategy": st.sampled_from(["mean", "median", "mode", "ffill", "bfill"])},
                optional={"column": column},
            ),
            st.fixed_dictionaries(
                {"strategy": st.just("constant"), "value": SCALARS}, optional={"column": column}
            ),
        ),
        "fix_dtype": st.fixed_dictionaries(
            {"dtype": st.sampled_from(["auto", "int", "float", "str", "bool", "datetime"])},
            optional={"column": column},
        ),
        "remove_outliers": st.fixed_dictionaries(
            {"method": st.sampled_from(["iqr", "zscore"])},
            optional={"column": column, "threshold": st.floats(0.1, 5)},
        ),
        "clamp_outliers": st.fixed_dictionaries(
            {"column": column, "low": st.floats(-100, 0), "high": st.floats(0, 1000)}
        ),
        "strip": st.fixed_dictionaries({}, optional={"column": column}),
        "title": st.fixed_dictionaries({}, optional={"column": column}),
        "replace": st.fixed_dictionaries(
            {"column": column, "old_value": SCALARS, "new_value": SCALARS}
        ),
        "map": st.fixed_dictionaries(
            {
                "column": column,
                "mapping": st.dictionaries(st.text(max_size=6), SCALARS, min_size=1, max_size=3),
            }
        ),
        "regex_replace": st.fixed_dictionaries(
            {
                "column": column,
                "pattern": st.sampled_from([r"\s+", r"^(\w)", "[0-9]", "a|b"]),
                "replacement": st.sampled_from(["", " ", r"\1", "X"]),
            }
        ),
        "replace_missing": st.fixed_dictionaries(
            {"tokens": st.lists(st.sampled_from(["N/A", "-", "null", "x"]), min_size=1)}
        ),
        "normalize_dates": st.fixed_dictionaries(
            {"column": column, "convention": st.sampled_from(["us", "eu", "iso"])}
        ),
        "phone_us": st.fixed_dictionaries({"column": column}),
        "decimal2": st.fixed_dictionaries({"column": column}),
        "fd_repair": st.fixed_dictionaries({"key": column, "column": column}),
        "drop_rows": st.fixed_dictionaries({"row_ids": st.lists(row_id, min_size=1, max_size=4)}),
        "set_cell": st.fixed_dictionaries(
            {"row_id": row_id, "column": column, "value": st.one_of(SCALARS, st.none())}
        ),
        "show_rows": st.fixed_dictionaries(
            {}, optional={"offset": st.integers(0, 300), "limit": st.integers(1, 50)}
        ),
        "validate_schema": st.just({}),
        "finish": st.just({}),
    }
    name = draw(st.sampled_from(sorted(choices)))
    return {"operation": name, "parameters": draw(choices[name])}


def frozen(episode: Episode) -> str:
    state = episode.state().model_dump(mode="json")
    return json.dumps([state, episode.observation().model_dump(mode="json")], sort_keys=True)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.sampled_from(TASKS), st.integers(0, 2**31), st.data())
def test_no_sequence_of_operations_breaks_an_episode(task_id, seed, data) -> None:
    episode = Episode("h", REGISTRY.make(task_id, seed))
    for _ in range(data.draw(st.integers(1, 10))):
        if episode.done:
            break
        keys = sorted(episode.spec.protected_columns)
        row_ids = episode.snapshot.values[keys[0]] if keys else []
        action = action_for(data.draw, episode.observation().columns, row_ids)
        before = frozen(episode)
        try:
            result = episode.step(Action(**action))
        except EnvError:
            assert frozen(episode) == before, action
            continue
        body = json.loads(json.dumps(result.model_dump(mode="json"), allow_nan=False))
        assert all(0.0001 <= v <= 0.9999 for v in body["reward"].values())
        columns = body["observation"]["columns"]
        assert len(set(columns)) == len(columns) and all(isinstance(c, str) for c in columns)
        assert episode.snapshot == Snapshot.of(episode.table), action
