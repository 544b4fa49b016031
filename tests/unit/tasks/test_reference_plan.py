"""The reference plan has one name in the code (`Task.reference_plan`); `Task.solution`,
its former name and the key of datasets/task_metadata.json, still reads the same plan."""

from __future__ import annotations

from dataclean_env.tasks import default_registry

EASY_PLAN = (
    {"operation": "remove_duplicates", "parameters": {}},
    {
        "operation": "rename_columns",
        "parameters": {
            "mapping": {
                "EMP ID": "emp_id",
                "EMP NAME": "emp_name",
                "DEP T": "dept",
                "SAL ARY": "salary",
                "AGE": "age",
            }
        },
    },
    {"operation": "finish", "parameters": {}},
)


def test_a_fixed_task_holds_its_metadata_plan_as_its_reference_plan() -> None:
    task = default_registry().make("easy_dedup_rename", None)
    assert task.reference_plan == EASY_PLAN
    assert task.solution is task.reference_plan


def test_a_generated_task_holds_its_generator_plan_under_both_names() -> None:
    task = default_registry().make("crm", 3, "train")
    assert [action["operation"] for action in task.reference_plan] == ["program", "drop_rows"]
    assert task.solution is task.reference_plan
