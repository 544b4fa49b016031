"""The agent loops docs/sql.md and the README's SQL section show run, and print what the
pages say they print."""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "sql.md"
README = ROOT / "README.md"


def run(block: str, source: Path) -> tuple[list[str], dict[str, object]]:
    """Execute a page's code block; what it printed, line by line, and its names."""
    printed = io.StringIO()
    scope: dict[str, object] = {}
    with contextlib.redirect_stdout(printed):
        exec(compile(block, str(source), "exec"), scope)
    return printed.getvalue().splitlines(), scope


def test_the_rayyan_loop_runs_as_documented() -> None:
    (block,) = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    lines, scope = run(block, DOC)
    assert lines[0] == "['no_volume', 'no_issue'] [[22, 53]]"
    assert lines[1] == "sql: article_jvolumn (22), article_jissue (53)."
    repair = scope["repaired"].info["repair"]  # type: ignore[attr-defined]
    assert repair["cells_changed"] == 75
    assert round(repair["precision"], 4) == 0.9333


def test_the_readme_loop_finds_and_repairs_rayyan_with_query_and_sql() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("* **SQL over the table**") :]
    block = textwrap.dedent(re.findall(r"```python\n(.*?)```", section, flags=re.S)[0])
    assert len(block.splitlines()) <= 15  # short enough for the README
    lines, scope = run(block, README)
    assert lines == [
        "{'precision': 0.9333333333333333, 'recall': 0.07383966244725738, "
        "'f1': 0.13685239491691104, 'cells_changed': 75}"
    ]
    history = scope["env"].state().history  # type: ignore[attr-defined]
    assert [h.operation for h in history] == ["query", "sql", "query", "sql"]
    assert [h.message for h in history[::2]] == ["Query returned 1 row."] * 2


def test_the_sandbox_s_limits_are_the_ones_the_pages_name() -> None:
    from dataclean_env.operations import sql
    from dataclean_env.sandbox import sql_jobs, worker

    page = " ".join(DOC.read_text(encoding="utf-8").split())
    design = " ".join((ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8").split())
    headroom = f"segment is capped {sql.SANDBOX_HEADROOM_BYTES // 2**20} MiB above its start"
    assert headroom in page and headroom in design
    assert f"a {sql_jobs.MEMORY_LIMIT[:-2]} MB memory limit" in page
    assert sql.SANDBOX_PROCESSES == 4 and "at most four per server process" in page
    assert sql.KILL_GRACE_SECONDS == 1.0 and "one second past the deadline" in page
    api = " ".join((ROOT / "docs" / "api.md").read_text(encoding="utf-8").split())
    assert (
        f"sandbox process capped {sql.SANDBOX_HEADROOM_BYTES // 2**20} MiB above its start" in api
    )
    kept = f"more than {worker.KEPT_GROWTH // 2**20} MiB beyond its start"
    assert kept in design and kept in page
