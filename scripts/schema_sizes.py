"""How much action schema a client resends each turn: the full JSON schema of `GET /schema`
against the compact one of `GET /schema/compact` (every operation, and per task).

    uv run python scripts/schema_sizes.py

Tokens are estimated as bytes / 4 (English text and JSON run at about four bytes per token
in common BPE vocabularies); the byte counts are exact (compact JSON, as the bridge sends it).
"""

from __future__ import annotations

import json

from dataclean_env.engine.episode import available_operations
from dataclean_env.models import CleaningAction
from dataclean_env.server.http.compact_schema import compact_action_schema
from dataclean_env.tasks import default_registry


def size(schema: dict) -> int:
    return len(json.dumps(schema, ensure_ascii=False).encode())


def main() -> None:
    full = size(CleaningAction.model_json_schema())
    rows = [("GET /schema (action)", full), ("GET /schema/compact", size(compact_action_schema()))]
    registry = default_registry()
    for task_id in registry.task_ids():
        operations = available_operations(registry.spec(task_id).operations)
        rows.append(
            (f"GET /schema/compact?task_id={task_id}", size(compact_action_schema(operations)))
        )
    print("| schema | bytes | ~tokens | of full |")
    print("|---|---:|---:|---:|")
    for name, nbytes in rows:
        print(f"| `{name}` | {nbytes:,} | {round(nbytes / 4):,} | {nbytes / full:.0%} |")


if __name__ == "__main__":
    main()
