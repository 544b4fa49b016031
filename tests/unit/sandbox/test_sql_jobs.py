"""The DuckDB jobs, called in this process as a worker calls them."""

from __future__ import annotations

import math
import threading

import pandas as pd
import pytest

from dataclean_env.errors import StepTimeLimit
from dataclean_env.sandbox.sql_jobs import run_query, run_statements

TABLE = pd.DataFrame({"id": [1, 2, 3], "city": [" Oslo", "Bergen ", None]})


def test_an_untimed_job_starts_no_interrupt_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    # A timer of an infinite interval dies in its thread (OverflowError): none may start.
    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    started = threading.active_count()
    assert run_query(TABLE, "SELECT count(*) AS n FROM t", math.inf) == (["n"], [(3,)], 1)
    assert failures == [] and threading.active_count() == started


def test_statements_answer_every_row_in_rowid_order() -> None:
    texts = ["UPDATE t SET city = trim(city)", "DELETE FROM t WHERE id = 2"]
    rows = run_statements(TABLE, texts, ["id", "city"], None, 30.0)
    assert rows == [(0, 1, "Oslo"), (2, 3, None)]


def test_a_job_past_its_time_is_refused_however_it_ends() -> None:
    # Interrupted by the timer, or done after its time: refused as a step past its limit.
    with pytest.raises(StepTimeLimit):
        run_query(TABLE, "SELECT count(*) FROM range(3000000)", 1e-9)
