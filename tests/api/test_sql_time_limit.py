"""A query that never ends, in process: stopped at the step's time limit (2 s, so not a unit
test), refused with STEP_TIME_LIMIT, the episode unchanged and still serving. The other
hostile statements are refused at once (tests/unit/operations/test_sql.py)."""

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
