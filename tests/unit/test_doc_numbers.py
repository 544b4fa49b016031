"""Every number the docs state is rendered here from the constant or setting it describes, so
changing one fails this test until the page says the new value. (Generated parts are checked
by their own scripts' tests: settings_doc, family_cards, tasks_doc, the README's blocks.)"""

from __future__ import annotations

import inspect
import sys

from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

import tasks_doc

from dataclean_env.benchmark.suite import INDEX_BITS, suite_named
from dataclean_env.errors import ClientQuotaReached, StoreFull
from dataclean_env.generation.noise import DIFFICULTIES
from dataclean_env.grading import penalties
from dataclean_env.grading.claim_graders import AUDIT_WEIGHTS
from dataclean_env.grading.truth import DOMAIN_VALUES
from dataclean_env.leaderboard.names import MODEL_LENGTH, NAME_LENGTH
from dataclean_env.leaderboard.service import (
    HEARTBEAT_S,
    HOLDER_GONE,
    MAX_ROLLOUTS,
    Leaderboard,
)
from dataclean_env.operations import sql
from dataclean_env.operations.program import MAX_PROGRAM_STEPS
from dataclean_env.operations.rows import (
    MAX_CELL_ASSIGNMENTS,
    MAX_ROW_IDS,
    MAX_SHOWN_ROWS,
    MAX_VALUE_CHARS,
)
from dataclean_env.operations.text import MAX_REPEAT_PRODUCT
from dataclean_env.sandbox.sql_jobs import MAX_RESULT_ROWS
from dataclean_env.server.http.table_view import MAX_PAGE
from dataclean_env.server.limits.client_limits import (
    CAP_SHARE,
    PUBLIC_CREATION_BURST,
    PUBLIC_CREATION_RATE_PER_SECOND,
    PUBLIC_EPISODES_PER_CLIENT,
    PUBLIC_SESSIONS_PER_CLIENT,
    largest_quota,
)
from dataclean_env.settings import Settings, bundled_datasets
from dataclean_env.table.limits import HISTORY_BYTES_PER_CELL, TABLE_GROWTH
from dataclean_env.tasks.custom import LABEL_BUDGET, load_custom_task
from dataclean_env.tasks.repair_plan import BUDGET_SLACK, DEFAULT_MAX_STEPS
from dataclean_env.training.rows import MAX_ROWS

MINUS = "\N{MINUS SIGN}"  # as the pages write a negative number
DEFAULTS = Settings.model_construct()  # the defaults, whatever DCE_* this process was given


def page(name: str) -> str:
    """A page's text with its line breaks and runs of spaces as single spaces."""
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


def missing(name: str, phrases: list[str]) -> list[str]:
    text = page(name)
    return [phrase for phrase in phrases if phrase not in text]


def test_api_md_states_the_operations_bounds() -> None:
    phrases = [
        f"`DCE_MAX_SESSIONS` = {DEFAULTS.max_sessions} at once",
        f"`{{n,m}}` may multiply to at most {MAX_REPEAT_PRODUCT:,},",
        f"up to {MAX_PROGRAM_STEPS} actions as one all-or-nothing step",
        f"`drop_rows` (`row_ids`, up to {MAX_ROW_IDS}),",
        f"`set_cells` (`cells`: up to {MAX_CELL_ASSIGNMENTS} `{{row_id, column, value}}`",
        f"a text value at most {MAX_VALUE_CHARS} characters;",
        f"`show_rows` (`offset, limit` ≤ {MAX_SHOWN_ROWS}:",
        f"`sql` (`sql`: up to {sql.MAX_STATEMENTS} `UPDATE t …`",
        f"`rows` holds at most {MAX_RESULT_ROWS} rows",
        f"a page (≤ {MAX_PAGE} rows) of the episode's current table",
        f"rollouts?: 1-{MAX_ROLLOUTS},",
        f"`n` at most {MAX_ROWS:,};",
    ]
    assert missing("docs/api.md", phrases) == []


def test_api_md_states_the_penalties() -> None:
    p = penalties
    phrases = [
        f"finish) {MINUS}{p.OUT_OF_ORDER:g}, an identical repeat {MINUS}{p.IMMEDIATE_REPEAT:g}, "
        f"working past {p.LATE_FRACTION:.0%} of the step budget {MINUS}{p.LATE_STEPS:g}; "
        f"capped at {p.CAP:g}."
    ]
    assert missing("docs/api.md", phrases) == []


def test_api_md_states_the_limits_settings_default_to() -> None:
    s = DEFAULTS
    phrases = [
        f"bodies and `/ws` frames ≤ {s.max_body_bytes / 1_000_000:g} MB on every route",
        f"request headers within {s.header_seconds:g} s and bodies within "
        f"{s.body_seconds:g} s, one step ≤ {s.step_seconds:g} s of engine time",
        f"a cell ≤ {s.max_cell_chars:,} characters and a table ≤ {s.max_table_chars:,}",
        f"session creations ≤ {PUBLIC_CREATION_BURST} at once then "
        f"{PUBLIC_CREATION_RATE_PER_SECOND:g} per second per client",
        f"expire after {s.detached_session_seconds:g} s unused",
        f"a `/ws` connection silent for {s.ws_idle_seconds / 60:g} minutes is closed",
    ]
    assert missing("docs/api.md", phrases) == []


def test_the_fixed_tasks_table_is_current() -> None:
    committed = (ROOT / "docs" / "tasks.md").read_text(encoding="utf-8")
    assert tasks_doc.with_tasks(committed) == committed, "run scripts/tasks_doc.py"


def test_the_fixed_tasks_table_reads_rows_budgets_and_weights_from_the_tasks() -> None:
    table = tasks_doc.render()
    assert "| `easy_dedup_rename` | 20 → 15 | 10 |" in table
    assert "| `medium_missing_dtype` | 30 | 15 |" in table
    assert table.endswith(
        "| duplicate .15, missing .2, dtype .2, outlier .2, schema .25 |\n" + tasks_doc.END
    )
    assert table.count("\n| `") == len(tasks_doc.ASKS)


def test_tasks_md_states_the_generators_and_graders_numbers() -> None:
    _, dirty, grader, _ = load_custom_task(bundled_datasets() / "rayyan")
    rows = [bound for low, high, _ in DIFFICULTIES.values() for bound in (low, high)]
    weights = " / ".join(f"{weight:.2f}" for weight in AUDIT_WEIGHTS.values())
    phrases = [
        f"{min(rows)} to {max(rows)} rows by difficulty",
        f"at most {MAX_PROGRAM_STEPS}, all or nothing",
        f"`rayyan` (`datasets/rayyan/`, {len(dirty):,} bibliographic records with "
        f"{grader.dirty_errors} wrong cells",
        "`max_steps` (default: computed from the table, below)",
        f"clean column with at most {DOMAIN_VALUES} distinct values",
        f"Weights {weights};",
        f"({grader.dirty_errors} of {dirty.size:,} cells differ)",
    ]
    assert missing("docs/tasks.md", phrases) == []


def test_the_readme_states_the_sql_label_and_lite_suite_numbers() -> None:
    phrases = [
        f"`sql` runs up to {sql.MAX_STATEMENTS} `UPDATE`/`DELETE` statements",
        f"up to {LABEL_BUDGET} rows (Raha and Baran's budget)",
        f"`--suite lite` ({suite_named('lite').episodes} episodes, its own board)",
    ]
    assert missing("README.md", phrases) == []


def test_benchmark_md_states_the_suites_and_the_leaderboards_numbers() -> None:
    s = DEFAULTS
    rollouts = inspect.signature(Leaderboard.create_run).parameters["rollouts"].default
    phrases = [
        f"a random {INDEX_BITS}-bit index",
        f"the full suite has {suite_named('full').episodes} of them",
        f"difficulty) cell ({suite_named('full').per_cell}), or the family's own number in "
        f"`per_cell_of` (the corpus: {suite_named('full').instances_per_cell('corpus')}, since",
        f"`DCE_LEADERBOARD_OPEN_RUNS_PER_CLIENT` (default {s.leaderboard_open_runs_per_client})"
        f" open runs. Past that the answer is 503 `CLIENT_QUOTA_REACHED` with "
        f"`Retry-After: {ClientQuotaReached.retry_after}`",
        f"`DCE_LEADERBOARD_OPEN_RUNS` (default {s.leaderboard_open_runs}); anonymous runs",
        f"`DCE_LEADERBOARD_OPEN_ANONYMOUS_RUNS` (default {s.leaderboard_open_anonymous_runs})",
        f"A full pool answers 503 `SERVER_FULL` with `Retry-After: {StoreFull.retry_after}`",
        f"`DCE_LEADERBOARD_UNPLAYED_RUN_SECONDS` (default "
        f"{s.leaderboard_unplayed_run_seconds:g} s)",
        f"a heartbeat every {HEARTBEAT_S:g} s",
        f"it is silent for {HOLDER_GONE.total_seconds():g} s",
        f"holds at most {NAME_LENGTH} characters. A model's name holds at most {MODEL_LENGTH}.",
        f"(1 to {MAX_ROLLOUTS}, default {rollouts})",
    ]
    assert missing("docs/benchmark.md", phrases) == []


def test_design_md_states_the_step_time_limit() -> None:
    assert missing("docs/DESIGN.md", [f"(a {DEFAULTS.step_seconds:g} s step)"]) == []


def test_training_md_states_the_session_limits() -> None:
    s = DEFAULTS
    phrases = [
        f"At most `DCE_MAX_SESSIONS` ({s.max_sessions}) sessions at once",
        f"a batch of {s.max_sessions} rollouts from one machine is served",
        f"one address may hold {PUBLIC_SESSIONS_PER_CLIENT} open sessions and "
        f"{PUBLIC_EPISODES_PER_CLIENT} REST episodes, and open {PUBLIC_CREATION_BURST} "
        f"sessions or resets at once, then {PUBLIC_CREATION_RATE_PER_SECOND:g} per second",
        f"a concurrency of at most {PUBLIC_SESSIONS_PER_CLIENT} there",
        f"whose quota is a quarter of the cap ({largest_quota(s.max_sessions)} sessions of "
        f"{s.max_sessions}, {largest_quota(s.max_episodes)} episodes of {s.max_episodes})",
        f"(`DCE_MAX_EPISODES=8`: {largest_quota(8)} episodes per client)",
    ]
    assert CAP_SHARE == 4  # "a quarter"
    assert missing("docs/training.md", phrases) == []


def test_tasks_md_states_set_cells_and_the_computed_budget() -> None:
    most = MAX_CELL_ASSIGNMENTS
    phrases = [
        f"Up to {most} `{{row_id, column, value}}` assignments",
        f"text at most {MAX_VALUE_CHARS} characters",
        f"more than {most} assignments",
        f"(⌈wrong cells / {most}⌉) or for the reference repair if that is longer, plus "
        f"{BUDGET_SLACK}, and never fewer than {DEFAULT_MAX_STEPS}",
        f"every table up to {(DEFAULT_MAX_STEPS - BUDGET_SLACK) * most:,} wrong cells keeps "
        f"{DEFAULT_MAX_STEPS}",
        f"may grow to {TABLE_GROWTH:g} times its starting text",
        f"may hold {HISTORY_BYTES_PER_CELL} bytes of parameters per cell",
    ]
    assert missing("docs/tasks.md", phrases) == []


def test_deployment_md_states_the_public_profiles_limits() -> None:
    phrases = [
        f"`DCE_CREATION_BURST` [{PUBLIC_CREATION_BURST}], `DCE_CREATION_RATE_PER_SECOND` "
        f"[{PUBLIC_CREATION_RATE_PER_SECOND:g}]",
        f"`DCE_EPISODES_PER_CLIENT` [{PUBLIC_EPISODES_PER_CLIENT}]",
        f"`DCE_SESSIONS_PER_CLIENT` [{PUBLIC_SESSIONS_PER_CLIENT}]",
        f"(`DCE_MAX_EPISODES=8`: {largest_quota(8)} episodes per client)",
    ]
    assert missing("docs/deployment.md", phrases) == []
