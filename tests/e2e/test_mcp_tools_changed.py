"""MCP clients that cache their tool list: told when a session's tools change, they list
again and call the new operations (FastMCP's client against a live uvicorn on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import mcp.types
import pytest
from fastmcp import Client
from fastmcp.client.messages import MessageHandler

from tests.web import LiveServer

pytestmark = pytest.mark.e2e

INSTALL_DOC = Path(__file__).resolve().parents[2] / "docs" / "install.md"
DOC_URL = "http://127.0.0.1:7860"


class CachedTools(MessageHandler):
    """A client's tool cache as most clients keep one: listed once, listed again only when
    the server says the list changed."""

    def __init__(self) -> None:
        self.names: set[str] | None = None
        self.stale = True
        self.notifications = 0

    async def on_tool_list_changed(self, message: mcp.types.ToolListChangedNotification) -> None:
        self.notifications += 1
        self.stale = True

    async def tools(self, client: Client) -> set[str]:
        if self.stale:
            self.names = {tool.name for tool in await client.list_tools()}
            self.stale = False
        assert self.names is not None
        return self.names


async def play_with_a_cache(url: str) -> dict[str, object]:
    cache = CachedTools()
    seen: dict[str, object] = {}
    async with Client(f"{url}/mcp", message_handler=cache) as client:
        seen["before"] = set(await cache.tools(client))
        await client.call_tool("reset_episode", {"task_id": "crm", "seed": 3})
        seen["told after the reset"] = cache.notifications  # before the reset's result
        seen["after"] = set(await cache.tools(client))
        # An operation tool, known from the re-list, called.
        seen["played"] = (await client.call_tool("show_rows", {})).structured_content
        # The same task again: its tools are the same, so there is nothing to announce.
        await client.call_tool("reset_episode", {"task_id": "crm", "seed": 4})
        seen["told after the same task"] = cache.notifications
        await client.call_tool("reset_episode", {"task_id": "easy_dedup_rename", "seed": 0})
        seen["told after another task"] = cache.notifications
    return seen


def test_a_caching_client_is_told_of_new_tools_and_calls_an_operation() -> None:
    with LiveServer() as server:
        seen = asyncio.run(play_with_a_cache(server.url))
    assert seen["before"] == {"reset_episode", "episode_state"}
    assert seen["told after the reset"] == 1
    after = seen["after"]
    assert isinstance(after, set)
    assert {"reset_episode", "episode_state", "show_rows", "finish"} <= after
    played = seen["played"]
    assert isinstance(played, dict) and played["observation"]["task_id"] == "crm"
    assert played["observation"]["step"] == 1
    assert seen["told after the same task"] == 1
    assert seen["told after another task"] == 2


def documented_example() -> str:
    """docs/install.md's MCP example, the one Python block of its MCP section."""
    section = INSTALL_DOC.read_text().split("## MCP", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return code


def test_the_documented_mcp_example_runs_as_written(tmp_path: Path) -> None:
    code = documented_example()
    assert code.count(DOC_URL) == 1  # the server's port as `uv run server` serves it
    script = tmp_path / "mcp_example.py"
    with LiveServer() as server:
        script.write_text(code.replace(DOC_URL, server.url))
        run = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=600
        )
    assert run.returncode == 0, run.stderr
    names, done = run.stdout.splitlines()
    assert {"reset_episode", "episode_state", "show_rows", "finish"} <= set(names.split())
    assert done == "True"
