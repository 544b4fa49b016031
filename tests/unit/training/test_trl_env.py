"""The TRL environment classes in-process: tools generated from the registry, what TRL will
see (public methods, signatures, docstrings), exact episodes and rewards, refusals."""

from __future__ import annotations

import inspect
from typing import Any, Literal

import pytest

from dataclean_env.errors import UnknownTask
from dataclean_env.operations import get_operation
from dataclean_env.operations.claims import CellClaim, cleaning_operation_names
from dataclean_env.tasks import default_registry
from dataclean_env.training.completion_log import parquet_safe
from dataclean_env.training.tools import plain_type
from dataclean_env.training.trl_env import (
    DataCleaningToolEnv,
    render,
    task_operations,
    tool_env_class,
)

EASY_MAPPING = {
    "EMP ID": "emp_id",
    "EMP NAME": "emp_name",
    "DEP T": "dept",
    "SAL ARY": "salary",
    "AGE": "age",
}

# The operations of the claim tasks and of the labelled custom task.
OTHER_TOOLS = ["audit", "fix", "identify", "label", "report_errors", "standardise", "validate"]


def public_functions(cls: type) -> list[str]:
    """What TRL lists as the class's methods (its own `inspect.getmembers` call)."""
    members = inspect.getmembers(cls, predicate=inspect.isfunction)
    return [name for name, _ in members if not name.startswith("_")]


def test_every_operation_is_a_tool_and_nothing_else_is_public() -> None:
    assert public_functions(DataCleaningToolEnv) == sorted(
        [*cleaning_operation_names(), "get_reward", "reset"]
    )


def test_a_subset_class_has_only_those_tools() -> None:
    cls = tool_env_class(["remove_duplicates", "finish"], name="Small")
    assert cls.__name__ == "Small"
    assert public_functions(cls) == ["finish", "get_reward", "remove_duplicates", "reset"]


def test_the_tools_for_some_tasks_are_the_operations_those_tasks_allow() -> None:
    registry = default_registry()
    assert (
        task_operations(["fix_types"])
        == list(registry.spec("fix_types").operations)
        == [
            *("fix_dtype", "map", "regex_replace", "normalize_dates", "validate_schema"),
            *("program", "finish", "query", "sql"),
        ]
    )
    # Each once, in the order the tasks list them: the example's default tools.
    assert task_operations(["fix_types", "normalize_dedupe", "crm"]) == [
        *("fix_dtype", "map", "regex_replace", "normalize_dates", "validate_schema"),
        *("program", "finish", "query", "sql", "strip", "title", "upper", "lower"),
        *("phone_us", "dedupe", "show_rows", "replace_missing", "fill_missing"),
        *("drop_rows", "set_cell"),
    ]
    with pytest.raises(UnknownTask, match="unknown task 'nope'"):
        task_operations(["fix_types", "nope"])


def test_every_operation_of_every_task_is_a_tool() -> None:
    cls = tool_env_class(task_operations(default_registry().task_ids()))
    assert public_functions(cls) == sorted(
        [*cleaning_operation_names(), *OTHER_TOOLS, "get_reward", "reset"]
    )


def test_a_nested_model_parameter_takes_plain_objects_named_in_its_description() -> None:
    # TRL types plain Python types only; the claim's own model checks each object.
    tool = tool_env_class(["report_errors"]).report_errors
    assert inspect.signature(tool).parameters["cells"].annotation == list[dict[str, Any]]
    assert tool.__doc__.split("\nArgs:\n")[1].split("\n\nReturns:")[0] == (
        "    cells: The cells claimed wrong. Each an object with row_id: Key value of the row "
        "(the task's row id); column (optional): The column; leave it out to claim the whole "
        "row; error_type (optional): One of: missing, wrong_type, out_of_range, bad_format, "
        "not_in_domain, duplicate_row, inconsistent."
    )
    assert plain_type(tuple[int, CellClaim | None]) == tuple[int, dict[str, Any] | None]
    assert plain_type(tuple[int, list[str] | None]) == tuple[int, list[str] | None]


def test_a_claim_task_plays_through_its_tools() -> None:
    env = tool_env_class(task_operations(["error_detection"]))()
    env.reset(task_id="error_detection", seed=0)
    (report,) = default_registry().make("error_detection", 0, "train").reference_plan
    with pytest.raises(ValueError, match="refused, the table is unchanged"):
        env.report_errors(cells=[{"row_id": 2313, "colum": "email"}])  # not a claim's field
    assert env.report_errors(**report["parameters"]).startswith("Recorded 10 claimed cells.")
    assert "Score 0.9999. Step 2, 6 steps left; the episode is over." in env.finish()
    assert (env.tool_calls, env.refused, env.get_reward()) == (3, 1, 0.9998)


def test_tool_signature_and_docstring_come_from_the_parameter_model() -> None:
    tool = DataCleaningToolEnv().fill_missing
    signature = inspect.signature(tool)  # bound: `self` is gone, as TRL sees it
    assert list(signature.parameters) == ["strategy", "column", "value"]
    strategy = signature.parameters["strategy"]
    assert strategy.default == "mean"
    assert strategy.annotation == Literal["mean", "median", "mode", "ffill", "bfill", "constant"]
    assert signature.parameters["column"].annotation == (str | None)
    assert signature.return_annotation is str
    assert tool.__doc__ == (
        f"{get_operation('fill_missing').description}\n\n"
        "Args:\n"
        "    strategy: How to choose the fill value. Default: 'mean'.\n"
        "    column: One column (default: every column with missing values).\n"
        "    value: The fill value; required with strategy=constant, refused otherwise.\n\n"
        "Returns:\n"
        "    What the step did, the episode's score, and the table after the step."
    )


@pytest.mark.parametrize("name", cleaning_operation_names())
def test_every_tool_documents_every_parameter(name: str) -> None:
    tool = getattr(DataCleaningToolEnv, name)
    fields = get_operation(name).params_model.model_fields
    if not fields:
        assert "Args:" not in tool.__doc__
    else:
        args = tool.__doc__.split("\nArgs:\n")[1].split("\n\nReturns:")[0].splitlines()
        assert [line.strip().split(":")[0] for line in args] == list(fields)
    required = {n for n, p in inspect.signature(tool).parameters.items() if p.default is p.empty}
    assert required == {"self"} | {n for n, f in fields.items() if f.is_required()}


def test_an_episode_scores_the_gain_and_ends_at_finish() -> None:
    env = DataCleaningToolEnv()
    first = env.reset(task_id="easy_dedup_rename", seed=0, split="eval", prompt=[{"x": 1}])
    assert first.startswith("\n\nEpisode started. Employee records (20 rows, 15 employees).")
    assert "Score 0.0001. Step 0, 10 steps left." in first
    assert env.remove_duplicates().startswith("Removed 5 duplicate rows (20 -> 15).\nScore 0.5000.")
    env.rename_columns(mapping=EASY_MAPPING)
    last = env.finish()
    assert "Score 0.9999. Step 3, 7 steps left; the episode is over." in last
    assert (env.initial_score, env.score, env.done) == (0.0001, 0.9999, True)
    assert (env.tool_calls, env.refused) == (3, 0)
    assert env.get_reward() == 0.9998
    with pytest.raises(ValueError, match="the episode is over"):
        env.finish()


def test_a_refused_call_raises_and_changes_nothing() -> None:
    env = DataCleaningToolEnv()
    env.reset(task_id="easy_dedup_rename", seed=0)
    with pytest.raises(ValueError, match=r"^refused, the table is unchanged: .*'NOPE'"):
        env.rename_columns(mapping={"NOPE": "x"})
    with pytest.raises(ValueError, match="refused, the table is unchanged"):
        env.fill_missing(strategy="constant")  # constant needs a value
    assert (env.score, env.tool_calls, env.refused, env.done) == (0.0001, 2, 2, False)
    assert env.get_reward() == 0.0
    assert env.remove_duplicates().startswith("Removed 5 duplicate rows")


def test_reward_can_be_the_final_score_and_reset_starts_over() -> None:
    env = DataCleaningToolEnv(reward="score")
    env.reset(task_id="easy_dedup_rename", seed=0)
    env.remove_duplicates()
    assert env.get_reward() == 0.5
    env.reset(task_id="easy_dedup_rename", seed=0)
    assert (env.score, env.tool_calls, env.done, env.get_reward()) == (0.0001, 0, False, 0.0001)


def test_the_row_picks_task_seed_and_split_and_defaults_fill_the_rest() -> None:
    a, b = DataCleaningToolEnv(), DataCleaningToolEnv()
    assert a.reset(task_id="crm", seed=3, split="eval") == b.reset(
        task_id="crm", seed=3, split="eval"
    )
    assert a.reset(task_id="crm", seed=3, split="eval") != b.reset(
        task_id="crm", seed=4, split="eval"
    )
    assert "Employee records" in a.reset()  # no task in the row: the class's task_id


def test_a_row_without_a_seed_plays_the_default_instance_after_a_seeded_one() -> None:
    played, fresh = DataCleaningToolEnv(), DataCleaningToolEnv()
    played.reset(task_id="crm", seed=3)
    assert played.reset(task_id="crm") == fresh.reset(task_id="crm")


def test_calls_before_reset_are_refused() -> None:
    with pytest.raises(ValueError, match="reset the environment first"):
        DataCleaningToolEnv().finish()


def test_rows_shown_limits_the_sample_rows() -> None:
    env = DataCleaningToolEnv()
    env.rows_shown = 2
    text = env.reset(task_id="easy_dedup_rename", seed=0)
    assert len([line for line in text.splitlines() if line.startswith("{")]) == 2
    assert render(env._last, 0).count("{") == 0


def test_parquet_safe_replaces_empty_dicts_only() -> None:
    logged = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"type": "function", "function": {"name": "finish", "arguments": {}}},
                {"type": "function", "function": {"name": "x", "arguments": {"a": {}, "b": []}}},
            ],
        },
        {"role": "tool", "name": "finish", "content": "done"},
    ]
    assert parquet_safe(logged) == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"type": "function", "function": {"name": "finish", "arguments": None}},
                {"type": "function", "function": {"name": "x", "arguments": {"a": None, "b": []}}},
            ],
        },
        {"role": "tool", "name": "finish", "content": "done"},
    ]


def test_the_sql_tools_say_what_they_take_and_answer() -> None:
    assert DataCleaningToolEnv.query.__doc__ == (
        "One read-only SELECT over table t (the current table; NULL is a missing cell). "
        "Answers its columns, up to 50 rows, total_rows and truncated (the observation's "
        "query_result); changes nothing.\n\n"
        "Args:\n"
        "    sql: One read-only SELECT over table t (the current table, key column included).\n\n"
        "Returns:\n"
        "    What the step did, the episode's score, and the table after the step."
    )
    assert DataCleaningToolEnv.sql.__doc__ == (
        "Up to 20 UPDATE t ... / DELETE FROM t ... statements separated by ';', all or "
        "nothing; the key column and the row order stay.\n\n"
        "Args:\n"
        "    sql: Up to 20 UPDATE t ... / DELETE FROM t ... statements separated by ';', "
        "applied all or nothing. The key column cannot change; rows keep their order; a "
        "column keeps its type.\n\n"
        "Returns:\n"
        "    What the step did, the episode's score, and the table after the step."
    )


def test_a_query_tool_call_shows_the_result_and_sql_repairs() -> None:
    env = DataCleaningToolEnv()
    env.reset(task_id="crm", seed=3)
    shown = env.query(sql="SELECT contact_id, country FROM t ORDER BY contact_id LIMIT 2")
    assert shown.splitlines()[:4] == [
        "Query returned 2 rows.",
        'Query result columns: ["contact_id", "country"]',
        '[109066, "Japan"]',
        '[109242, "Canada"]',
    ]
    before = env.score
    repaired = env.sql(sql="UPDATE t SET country = 'France' WHERE country = 'Frrance'")
    assert repaired.startswith("sql: country (")
    assert env.score > before
    with pytest.raises(ValueError, match="key column; it cannot change"):
        env.sql(sql="UPDATE t SET contact_id = contact_id + 1")
