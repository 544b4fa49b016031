"""MCP clients over HTTP: FastMCP's client against a live uvicorn on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from dataclean_env.operations.registry import alias_names
from dataclean_env.settings import Settings
from tests.web import LiveServer

pytestmark = pytest.mark.e2e

TASK, SEED = "crm", 3
ACTIONS: list[tuple[str, dict[str, Any]]] = [
    ("finish", {}),
]


async def play_over_mcp(url: str) -> tuple[list[str], list[str], dict[str, Any], dict[str, Any]]:
    async with Client(f"{url}/mcp") as client:
        before = sorted(tool.name for tool in await client.list_tools())
        await client.call_tool("reset_episode", {"task_id": TASK, "seed": SEED})
        after = sorted(tool.name for tool in await client.list_tools())
        with pytest.raises(ToolError) as refused:
            await client.call_tool("fix_dtype", {"column": "no_such_column", "dtype": "int"})
        result: Any = None
        for name, arguments in ACTIONS:
            result = await client.call_tool(name, arguments)
        payload = result.structured_content
        assert payload["done"] is True
        return (
            before,
            after,
            payload["observation"]["score_components"],
            json.loads(str(refused.value)),
        )


def play_over_rest(url: str) -> dict[str, Any]:
    first = httpx.post(f"{url}/reset", json={"task_id": TASK, "seed": SEED}).json()
    episode = first["observation"]["episode_id"]
    body: dict[str, Any] = {}
    for name, arguments in ACTIONS:
        body = httpx.post(
            f"{url}/step",
            json={"episode_id": episode, "operation": name, "parameters": arguments},
        ).json()
    assert body["done"] is True
    return body["reward"]  # the reward object: total and components


def test_an_mcp_client_plays_a_generated_family_to_the_rest_score() -> None:
    with LiveServer() as server:
        before, after, mcp_score, refusal = asyncio.run(play_over_mcp(server.url))
        rest_score = play_over_rest(server.url)
        reset = httpx.post(f"{server.url}/reset", json={"task_id": TASK, "seed": SEED}).json()
    assert before == ["episode_state", "reset_episode"]
    # One tool per operation the task allows (an alias such as fill_missing_mean is a
    # spelling of its operation, not a tool of its own), and no other: no `label`, say,
    # which labelled real tables alone offer.
    allowed = set(reset["observation"]["available_operations"]) - set(alias_names())
    assert sorted(after) == sorted([*allowed, "episode_state", "reset_episode"])
    assert "finish" in after and "label" not in after
    assert refusal["code"] == "INVALID_PARAMETERS"  # the code REST answers with
    assert mcp_score == rest_score


async def two_sessions(url: str) -> tuple[str, str]:
    async with Client(f"{url}/mcp") as one, Client(f"{url}/mcp") as two:
        first = await one.call_tool("reset_episode", {"task_id": TASK, "seed": 1})
        state_two = (await two.call_tool("episode_state", {})).structured_content
        assert not state_two["episode_id"]  # the other session's reset is not this one's
        second = await two.call_tool("reset_episode", {"task_id": TASK, "seed": 1})
        await two.call_tool("finish", {})
        assert (await one.call_tool("episode_state", {})).structured_content["done"] is False
        return (
            first.structured_content["observation"]["episode_id"],
            second.structured_content["observation"]["episode_id"],
        )


def test_two_mcp_sessions_never_share_an_episode() -> None:
    with LiveServer() as server:
        first, second = asyncio.run(two_sessions(server.url))
    assert first != second


def open_counts(url: str) -> tuple[float, float]:
    """(dce_open_sessions, dce_open_episodes) from /metrics."""
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{url}/metrics", timeout=30).text
    found = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}
    return found["dce_open_sessions"], found["dce_open_episodes"]


async def counts_during_an_mcp_episode(url: str) -> list[tuple[float, float]]:
    seen = [open_counts(url)]
    async with Client(f"{url}/mcp") as client:
        await client.list_tools()  # the session exists; its episode is not reset yet
        seen.append(open_counts(url))
        await client.call_tool("reset_episode", {"task_id": TASK, "seed": SEED})
        seen.append(open_counts(url))
    return seen


def test_metrics_count_mcp_sessions_and_their_episodes() -> None:
    with LiveServer(Settings(openenv_mount="eager")) as server:
        httpx.post(f"{server.url}/reset/{TASK}", json={"episode_id": "rest-1"})
        seen = asyncio.run(counts_during_an_mcp_episode(server.url))
    assert seen == [(0.0, 1.0), (1.0, 1.0), (1.0, 2.0)]
