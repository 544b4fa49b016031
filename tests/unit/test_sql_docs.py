"""The agent loop docs/sql.md shows runs, and prints what the page says it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "sql.md"


def test_the_rayyan_loop_runs_as_documented() -> None:
    (block,) = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    printed = io.StringIO()
    scope: dict[str, object] = {}
    with contextlib.redirect_stdout(printed):
        exec(compile(block, str(DOC), "exec"), scope)
    lines = printed.getvalue().splitlines()
    assert lines[0] == "['no_volume', 'no_issue'] [[22, 53]]"
    assert lines[1] == "sql: article_jvolumn (22), article_jissue (53)."
    repair = scope["repaired"].info["repair"]  # type: ignore[attr-defined]
    assert repair["cells_changed"] == 75
    assert round(repair["precision"], 4) == 0.9333
