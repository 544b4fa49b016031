"""The heuristic agent's play on the tasks graded on claims (detection, standardisation,
audit): page through the whole table with show_rows, profile it (`detector.py`), then send
the claims, transforms or audit phases that the profile supports. Never sees gold."""

from __future__ import annotations

import re
from typing import Any

from dataclean_env.agents import detector

PAGE = 50
MAX_FIX_STEPS = 200
FINISH = {"operation": "finish", "parameters": {}}
_KEY = re.compile(r"(\w+) is the protected key")


def claim_kind(operations: set[str]) -> str | None:
    """The claim kind a task's operations show, or None for a cleaning task."""
    for operation, kind in (
        ("report_errors", "detection"),
        ("standardise", "standardisation"),
        ("audit", "audit"),
    ):
        if operation in operations:
            return kind
    return None


class ClaimsPlayer:
    def __init__(self, kind: str):
        self.kind = kind
        self.rows: dict[int, dict[str, Any]] = {}  # position -> row as shown
        self.plan: list[dict[str, Any]] | None = None

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        offset = observation.get("sample_offset", 0)
        for i, row in enumerate(observation["sample_rows"]):
            self.rows[offset + i] = row
        total = observation["shape"][0]
        missing = next((i for i in range(total) if i not in self.rows), None)
        if self.plan is None and missing is not None:
            return {"operation": "show_rows", "parameters": {"offset": missing, "limit": PAGE}}
        if self.plan is None:
            self.plan = self._plan(observation)
        return self.plan.pop(0) if self.plan else FINISH

    def _plan(self, observation: dict[str, Any]) -> list[dict[str, Any]]:
        description = observation["task_description"]
        rows = [self.rows[i] for i in sorted(self.rows)]
        found_key = _KEY.search(description)
        key = found_key.group(1) if found_key else observation["columns"][0]
        if self.kind == "standardisation":
            transforms = detector.transforms(rows, key, description)
            if not transforms:
                return [FINISH]
            return [{"operation": "standardise", "parameters": {"transforms": transforms}}, FINISH]
        found = detector.find_errors(rows, key, description)
        cells = [_cell(row_id, column, kind) for (row_id, column), kind in found.items()]
        if self.kind == "detection":
            return [{"operation": "report_errors", "parameters": {"cells": cells}}, FINISH]
        fixes = detector.repairs(rows, key, found)
        repaired = sum(
            len(a["parameters"]["row_ids"]) if a["operation"] == "drop_rows" else 1 for a in fixes
        )
        return [
            {"operation": "audit", "parameters": {"categories": sorted(set(found.values()))}},
            {"operation": "identify", "parameters": {"cells": cells}},
            *(
                {"operation": "fix", "parameters": {"operations": fixes[i : i + MAX_FIX_STEPS]}}
                for i in range(0, max(1, len(fixes)), MAX_FIX_STEPS)
            ),
            {"operation": "validate", "parameters": {"issues_remaining": len(found) - repaired}},
        ]


def _cell(row_id: Any, column: str | None, kind: str) -> dict[str, Any]:
    cell: dict[str, Any] = {"row_id": row_id, "error_type": kind}
    if column is not None:
        cell["column"] = column
    return cell
