"""The compact action schema: one line per operation, the envelope, nothing else."""

from __future__ import annotations

import json

from dataclean_env.operations import alias_names, operation_names
from dataclean_env.server.http.compact_schema import compact_action_schema


def test_every_operation_has_one_line_then_the_aliases() -> None:
    schema = compact_action_schema()
    assert [schema[k] for k in ("title", "type", "required")] == [
        "CleaningAction",
        "object",
        ["operation"],
    ]
    assert schema["reply"] == '{"operation": "<name>", "parameters": {...}}'
    lines = schema["operations"]
    assert [line.split("(")[0] for line in lines[:-1]] == operation_names()
    assert lines[-1].startswith(f"also accepted: {', '.join(alias_names())} (shorthands of ")


def test_a_line_carries_types_defaults_and_the_description() -> None:
    lines = compact_action_schema(["remove_outliers", "finish"])["operations"]
    assert lines == [
        'remove_outliers(method?: iqr|zscore = "iqr", column?: text, threshold?: number)'
        " - Drop rows with an outlier in a numeric column (iqr or zscore).",
        "finish() - Declare the table clean and end the episode.",
    ]


def test_it_is_a_few_kilobytes() -> None:
    # Every operation, the claim tasks' included (one task sends only its own: less).
    # The reading and labelling operations (value_counts, find_rows, label) add ~400 bytes,
    # query and sql's lines (where a result goes, what sql keeps) ~350.
    assert len(json.dumps(compact_action_schema())) < 5500
