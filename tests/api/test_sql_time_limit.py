"""A query that never ends, in process: stopped at the step's time limit (2 s, so not a unit
test), refused with STEP_TIME_LIMIT, the episode unchanged and still serving; and one that
DuckDB cannot interrupt, stopped by ending its sandbox process. The other hostile
statements are refused at once (tests/unit/operations/test_sql.py)."""

from __future__ import annotations

from dataclean_env.in_process import DataCleaningEnv

NEVER_ENDING = (
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
)


def test_a_never_ending_query_is_stopped_at_the_time_limit_and_changes_nothing() -> None:
    env = DataCleaningEnv("rayyan")
    before = env.reset()
    result = env.step({"operation": "query", "parameters": {"sql": NEVER_ENDING}})
    assert result.info["error"]["code"] == "STEP_TIME_LIMIT"
    assert result.observation.step == 0
    assert (
        env.step({"operation": "query", "parameters": {"sql": "SELECT 1"}}).info.get("error")
        is None
    )
    assert result.reward == before.reward


# One row's list: DuckDB looks for an interrupt between chunks of rows, never inside one
# function call, so only ending the sandbox's process stops it (seconds on 2 cores).
DEAF_TO_INTERRUPTS = "SELECT len(list_distinct(range(20000000)))"


def test_a_query_deaf_to_interrupts_is_refused_at_the_time_limit() -> None:
    from dataclasses import replace

    from dataclean_env.table.limits import default_limits

    # A limit far below the query's cost on any machine: the verdict does not hang on speed.
    env = DataCleaningEnv("rayyan", limits=replace(default_limits(), step_seconds=0.05))
    before = env.reset()
    result = env.step({"operation": "query", "parameters": {"sql": DEAF_TO_INTERRUPTS}})
    assert result.info["error"]["code"] == "STEP_TIME_LIMIT"
    assert result.observation.step == 0
    assert result.reward == before.reward
    after = env.step({"operation": "query", "parameters": {"sql": "SELECT 1"}})
    assert after.info.get("error") is None
