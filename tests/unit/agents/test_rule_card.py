"""The rule-card reader behind the heuristic agent: exact steps from hand-written cards."""

from __future__ import annotations

from dataclean_env.agents.rule_card import read_card

COLUMNS = ["sku", "product", "warehouse", "on_hand", "status", "counted_on", "note"]
EVERYTHING = {
    "dedupe", "strip", "title", "lower", "map", "replace_missing", "fill_missing",
    "normalize_dates", "regex_replace", "fix_dtype", "clamp_outliers", "show_rows", "drop_rows",
}  # fmt: skip


def test_a_card_becomes_its_steps_in_pipeline_order() -> None:
    card = (
        "Stock count. Rules: status in lower case; warehouse as one of ['Berlin DC'] — in "
        "this export 'BER' means 'Berlin DC', 'bln' means 'Berlin DC'; numbers are written "
        "EU style; on_hand an int — clamp to at least 0; note tokens ['N/A', '-'] mean "
        "missing; product tokens ['?'] mean 'Unknown'; counted_on as ISO text — slashed "
        "dates are day first (EU). Keep one row per sku. sku is the protected key."
    )
    plan = read_card(card, COLUMNS, EVERYTHING, "sku")
    assert plan.steps == [
        {"operation": "dedupe", "parameters": {"keys": ["sku"]}},
        {"operation": "strip", "parameters": {}},
        {"operation": "lower", "parameters": {"column": "status"}},
        {
            "operation": "map",
            "parameters": {"column": "warehouse", "mapping": {"BER": "Berlin DC", "bln": "Berlin DC"}},
        },
        {"operation": "replace_missing", "parameters": {"columns": ["note"], "tokens": ["N/A", "-"]}},
        {"operation": "replace_missing", "parameters": {"columns": ["product"], "tokens": ["?"]}},
        {
            "operation": "fill_missing",
            "parameters": {"column": "product", "strategy": "constant", "value": "Unknown"},
        },
        {"operation": "normalize_dates", "parameters": {"column": "counted_on", "convention": "eu"}},
        {"operation": "regex_replace", "parameters": {"column": "on_hand", "pattern": r"[.\s€]", "replacement": ""}},
        {"operation": "regex_replace", "parameters": {"column": "on_hand", "pattern": ",", "replacement": "."}},
        {"operation": "fix_dtype", "parameters": {"column": "on_hand", "dtype": "int"}},
        {"operation": "clamp_outliers", "parameters": {"column": "on_hand", "low": 0, "high": 1e12}},
    ]  # fmt: skip
    assert plan.leave_empty == {"note"}
    assert plan.drop_matching is None


def test_only_allowed_operations_and_never_the_key() -> None:
    card = "sku trimmed and in Title Case; sku an int. Contacts whose note is at x.test are test records."
    plan = read_card(card, COLUMNS, {"fix_dtype"}, "sku")
    assert plan.steps == []  # title is not allowed, and the cast names the key
    found = read_card(card, COLUMNS, {"show_rows", "drop_rows"}, "sku")
    assert found.drop_matching == ("note", "x.test")
