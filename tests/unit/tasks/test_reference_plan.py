"""The reference plan has one name in the code (`Task.reference_plan`), whether it comes
from datasets/task_metadata.json (its key there is `solution`) or from a generator."""

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


def test_a_generated_task_holds_its_generator_plan() -> None:
    task = default_registry().make("crm", 3, "train")
    assert [action["operation"] for action in task.reference_plan] == ["program", "drop_rows"]
