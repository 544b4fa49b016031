"""Fixed tasks check the values already present: a column holding another column's values
is not the gold column, whatever its header and type say (issue 10, section 2).

Swapping or rotating columns of one type and then following the honest plan used to score
0.9999 on easy_dedup_rename, hard_full_pipeline and expert_sales_pipeline.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from dataclean_env.engine.episode import Episode
from dataclean_env.grading import Grader, build_facts
from dataclean_env.grading.components import dtype_errors, missing_errors, schema_errors
from dataclean_env.schemas import Action
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.tasks import TaskRegistry


def rename(mapping: dict[str, str]) -> dict[str, Any]:
    return {"operation": "rename_columns", "parameters": {"mapping": mapping}}


def rotated(mapping: dict[str, str], *sources: str) -> dict[str, str]:
    """`mapping` with the targets of `sources` rotated by one (a swap for two)."""
    result = dict(mapping)
    targets = [mapping[s] for s in sources]
    for source, target in zip(sources, targets[1:] + targets[:1], strict=True):
        result[source] = target
    return result


def final_reward(registry: TaskRegistry, task_id: str, actions: list[dict[str, Any]]):
    episode = Episode("misplaced", registry.make(task_id, None))
    for action in actions:
        result = episode.step(Action(**action))
    assert result.done
    return result.reward


def _cases(metadata: dict[str, dict]) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    easy = metadata["easy_dedup_rename"]["solution"]
    easy_map = metadata["easy_dedup_rename"]["header_map"]
    hard = metadata["hard_full_pipeline"]["solution"]
    expert = metadata["expert_sales_pipeline"]["solution"]
    expert_map = metadata["expert_sales_pipeline"]["header_map"]

    def on_easy(*sources: str) -> list[dict[str, Any]]:
        return [easy[0], rename(rotated(easy_map, *sources)), *easy[2:]]

    def on_hard(*columns: str) -> list[dict[str, Any]]:
        identity = {c: c for c in columns}
        return [hard[0], rename(rotated(identity, *columns)), *hard[1:]]

    def on_expert(*sources: str) -> list[dict[str, Any]]:
        return [expert[0], rename(rotated(expert_map, *sources)), *expert[2:]]

    return {
        "easy salary<->age": ("easy_dedup_rename", on_easy("SAL ARY", "AGE")),
        "easy emp_name<->dept": ("easy_dedup_rename", on_easy("EMP NAME", "DEP T")),
        "hard product<->status": ("hard_full_pipeline", on_hard("product", "status")),
        "hard customer_id<->rating": ("hard_full_pipeline", on_hard("customer_id", "rating")),
        "hard quantity<->rating": ("hard_full_pipeline", on_hard("quantity", "rating")),
        "expert category<->channel": (
            "expert_sales_pipeline",
            on_expert("Product Category", "SalesChannel"),
        ),
        "expert name->region->category": (
            "expert_sales_pipeline",
            on_expert("Customer Name", "REGION", "Product Category"),
        ),
    }


CASES = [
    "easy salary<->age",
    "easy emp_name<->dept",
    "hard product<->status",
    "hard customer_id<->rating",
    "hard quantity<->rating",
    "expert category<->channel",
    "expert name->region->category",
]


@pytest.mark.parametrize("case", CASES)
def test_values_in_the_wrong_columns_do_not_score_as_clean(
    registry: TaskRegistry, metadata: dict[str, dict], case: str
) -> None:
    task_id, actions = _cases(metadata)[case]
    honest = final_reward(registry, task_id, metadata[task_id]["solution"])
    swapped = final_reward(registry, task_id, actions)
    assert honest.total == 0.9999
    # Two or three of 4-7 value columns are wrong: a misplaced column counts as absent.
    assert swapped.total <= 0.9, f"{case}: {swapped.total}"
    # The columns the swap misplaced show in the schema score (every task scoring it).
    if "schema_score" in metadata[task_id]["scoring"]:
        assert swapped.schema_score < 0.9, f"{case}: {swapped.schema_score}"


def test_exact_scores_of_a_swap_on_easy(registry: TaskRegistry, metadata: dict[str, dict]) -> None:
    """Two gold columns hold the wrong values: each is absent and an extra column, as if
    renamed away: schema errors 4 against the dirty table's 10 (5 absent + 5 extra)."""
    _, actions = _cases(metadata)["easy salary<->age"]
    reward = final_reward(registry, "easy_dedup_rename", actions)
    assert reward.duplicate_score == 0.9999
    assert reward.schema_score == 0.6
    assert reward.total == 0.8


# ── the rule on a hand-made pair ──────────────────────────────────────────────


def _gold() -> pd.DataFrame:
    return pd.DataFrame(
        {"id": [1, 2, 3], "a": [10, 20, 30], "b": [7, 8, 9], "s": ["x", "y", "z"]},
    )


def _dirty() -> pd.DataFrame:
    return pd.DataFrame(
        {"id": [1, 2, 3], "a": [10, None, 30], "b": [7, 8, 9], "s": ["x", "y", "z"]},
    )


@pytest.fixture(scope="module")
def grader() -> Grader:
    weights = {"missing_score": 0.3, "dtype_score": 0.3, "schema_score": 0.4}
    return Grader.for_task(build_facts(_dirty(), _gold(), "id"), weights, _dirty())


def test_anchors_are_the_present_cells_already_right(grader: Grader) -> None:
    assert grader.facts.anchors == {
        "a": (("1", 10), ("3", 30)),
        "b": (("1", 7), ("2", 8), ("3", 9)),
        "s": (("1", "x"), ("2", "y"), ("3", "z")),
    }


def test_a_swapped_column_counts_as_absent(grader: Grader) -> None:
    table = _gold().rename(columns={"a": "b", "b": "a"})
    keyed = grader.facts.keyed(Snapshot.of(table))
    assert keyed.misplaced == frozenset({"a", "b"})
    assert schema_errors(grader.facts, keyed) == 4
    assert dtype_errors(grader.facts, keyed) == 6
    # The filled cell sits in a column that is not gold's `a`.
    assert missing_errors(grader.facts, keyed) == 1
    assert grader.components(Snapshot.of(_gold())) == {
        "missing_score": 1.0,
        "dtype_score": 1.0,
        "schema_score": 1.0,
    }


def test_one_changed_present_value_misplaces_its_column(grader: Grader) -> None:
    table = _gold()
    table.loc[2, "s"] = "q"
    keyed = grader.facts.keyed(Snapshot.of(table))
    assert keyed.misplaced == frozenset({"s"})


def test_lost_rows_and_a_different_type_do_not_misplace(grader: Grader) -> None:
    """Only present rows are checked, and values compare within the gold column's kind."""
    table = _gold().iloc[[0, 2]].astype({"a": "float64"})
    keyed = grader.facts.keyed(Snapshot.of(table))
    assert keyed.misplaced == frozenset()
    text = _gold().astype({"b": "str"})
    keyed = grader.facts.keyed(Snapshot.of(text))
    assert keyed.misplaced == frozenset()  # wrong kind is the dtype component's business
    assert schema_errors(grader.facts, keyed) == 1
