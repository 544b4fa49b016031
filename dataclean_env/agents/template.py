"""`TemplateAgent` never reads the description: one fixed plan per column name, written from
the generated families' usual rules (US dates and numbers, the common null tokens, Title Case
names, (XXX) XXX-XXXX phones): what a card-free template earns."""

from __future__ import annotations

from typing import Any

from dataclean_env.agents.protocol import FINISH

# The card-free template: column name -> its fixed steps, in pipeline order.
_TOKENS = ["N/A", "null", "-", ""]
_DATES = ("created_at", "order_date", "signup_date", "counted_on", "hire_date", "ordered_on")
_TEMPLATE: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "full_name": [("title", {})],
    "name": [("title", {})],
    "email": [("lower", {})],
    "phone": [("phone_us", {})],
    "status": [("strip", {}), ("lower", {})],
    "segment": [("replace_missing", {"tokens": _TOKENS})],
    "department": [
        ("replace_missing", {"tokens": _TOKENS}),
        ("fill_missing", {"strategy": "constant", "value": "Unassigned"}),
    ],
    "reorder_level": [
        ("replace_missing", {"tokens": _TOKENS}),
        ("fill_missing", {"strategy": "constant", "value": "0"}),
        ("fix_dtype", {"dtype": "int"}),
    ],
    **{column: [("normalize_dates", {"convention": "us"})] for column in _DATES},
    "hire_date": [("normalize_dates", {"convention": "us"}), ("fix_dtype", {"dtype": "datetime"})],
    "ordered_on": [
        ("normalize_dates", {"convention": "us"}),
        ("fix_dtype", {"dtype": "datetime"}),
    ],
    "quantity": [("fix_dtype", {"dtype": "int"})],
    "on_hand": [("fix_dtype", {"dtype": "int"}), ("clamp_outliers", {"low": 0, "high": 1e9})],
    "age": [("fix_dtype", {"dtype": "int"}), ("clamp_outliers", {"low": 18, "high": 70})],
    "unit_price": [("fix_dtype", {"dtype": "float"})],
    "unit_cost": [("fix_dtype", {"dtype": "float"})],
    "lifetime_value": [("fix_dtype", {"dtype": "float"})],
    "revenue": [("fix_dtype", {"dtype": "float"}), ("clamp_outliers", {"low": 0, "high": 1e12})],
    "paid": [("fix_dtype", {"dtype": "bool"})],
    "active": [("fix_dtype", {"dtype": "bool"})],
    "discontinued": [("fix_dtype", {"dtype": "bool"})],
}


class TemplateAgent:
    """A fixed plan per column name that never reads the task description (or the data):
    drop exact duplicates, keep one row per key (the first column), strip text, then each
    known column's steps; operations the task lacks are skipped."""

    name = "card-free-template"

    def __init__(self) -> None:
        self._plan: list[dict[str, Any]] | None = None

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        if self._plan is None:
            self._plan = self._build(observation)
        return self._plan.pop(0) if self._plan else FINISH

    @staticmethod
    def _build(observation: dict[str, Any]) -> list[dict[str, Any]]:
        columns = observation["columns"]
        steps: list[dict[str, Any]] = [
            {"operation": "remove_duplicates", "parameters": {}},
            {"operation": "dedupe", "parameters": {"keys": columns[:1]}},
            {"operation": "strip", "parameters": {}},
        ]
        for column in columns:
            for operation, parameters in _TEMPLATE.get(column, []):
                column_parameter = "columns" if operation == "replace_missing" else "column"
                value = [column] if column_parameter == "columns" else column
                steps.append(
                    {"operation": operation, "parameters": {**parameters, column_parameter: value}}
                )
        if {"customer_id", "customer_name"} <= set(columns):
            steps.append(
                {
                    "operation": "fd_repair",
                    "parameters": {"key": "customer_id", "column": "customer_name"},
                }
            )
        allowed = set(observation["available_operations"])
        return [s for s in steps if s["operation"] in allowed]
