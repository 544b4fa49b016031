"""MCP sessions end for good: an ended session (DELETE, expiry) leaves no episode behind.
Real HTTP (MCP's streamable HTTP, spoken by hand) against a live uvicorn on 127.0.0.1."""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from dataclean_env.server.openenv.mcp_episode import McpEpisode
from dataclean_env.settings import Settings
from tests.web import LiveServer

pytestmark = pytest.mark.e2e

TASK = "easy_dedup_rename"
ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def message(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of an answer (JSON, or one SSE event)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()


class McpSession:
    """One MCP session over streamable HTTP, from `source` (a 127.0.0.x address)."""

    def __init__(self, url: str, source: str = "127.0.0.1"):
        self.url = f"{url}/mcp"
        transport = httpx.HTTPTransport(local_address=source)
        self.http = httpx.Client(transport=transport, timeout=60)
        self.id: str | None = None
        self.calls = 0

    def open(self) -> httpx.Response:
        """The initialize request's answer (the session is open if it has an id)."""
        answer = self.http.post(self.url, json=INITIALIZE, headers={"accept": ACCEPT})
        self.id = answer.headers.get("mcp-session-id")
        if self.id is not None:
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert self.http.post(self.url, json=initialized, headers=self.headers()).is_success
        return answer

    def headers(self) -> dict[str, str]:
        assert self.id is not None
        return {"accept": ACCEPT, "mcp-session-id": self.id, "mcp-protocol-version": "2025-06-18"}

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        request = {
            "jsonrpc": "2.0",
            "id": self.calls,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        answer = self.http.post(self.url, json=request, headers=self.headers())
        assert answer.status_code == 200, answer.text
        return message(answer)

    def reset(self) -> dict[str, Any]:
        result = self.call("reset_episode", {"task_id": TASK, "seed": 1})["result"]
        assert not result.get("isError"), result
        return result

    def delete(self) -> int:
        status = self.http.delete(self.url, headers=self.headers()).status_code
        self.http.close()
        return status


def live_episodes() -> int:
    gc.collect()
    return sum(isinstance(thing, McpEpisode) for thing in gc.get_objects())


def wait_until(done: Callable[[], bool], seconds: float = 60) -> None:
    """Until `done()` (a condition of the server's state): a deadline far from its time."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "the server never got there"
        time.sleep(0.05)


SESSIONS = 5
EXPIRY = 15  # seconds a detached session lives in the expiry test


def test_deleted_mcp_sessions_leave_no_episode_behind() -> None:
    with LiveServer() as server:
        before = live_episodes()
        for _ in range(SESSIONS):
            session = McpSession(server.url)
            assert session.open().status_code == 200
            session.reset()
            assert session.delete() == 200
        # The DELETE's answer comes once the session's episode and OpenEnv session are gone.
        assert server.app.state.openenv.active_sessions == 0
        assert len(server.app.state.mcp.sessions) == 0
        assert live_episodes() - before == 0


def test_expired_mcp_sessions_leave_no_episode_behind() -> None:
    # Sessions left without a DELETE: they end when their OpenEnv session expires. The
    # expiry is far from the time the five resets take, even on a busy machine (at 1 s, the
    # first session could expire before the last was counted).
    with LiveServer(Settings(detached_session_seconds=EXPIRY)) as server:
        before = live_episodes()
        sessions = [McpSession(server.url) for _ in range(SESSIONS)]
        for session in sessions:
            assert session.open().status_code == 200
            session.reset()
        assert live_episodes() - before == SESSIONS
        wait_until(lambda: server.app.state.openenv.active_sessions == 0, 6 * EXPIRY)
        assert live_episodes() - before == 0
        # The MCP sessions end too (their transport's idle time is the same), entries and all.
        wait_until(lambda: len(server.app.state.mcp.sessions) == 0, 6 * EXPIRY)
        assert [session.delete() for session in sessions] == [404] * SESSIONS


def test_mcp_sessions_count_against_the_clients_session_quota() -> None:
    """/ws and MCP share one pool of sessions: one quota per client holds for both, so one
    address cannot take the pool. Past it, an initialize is refused like a reset past the
    episode quota (503 CLIENT_QUOTA_REACHED, Retry-After); another client is unaffected; an
    ended session frees its place."""
    with LiveServer(Settings(sessions_per_client=2)) as server:
        held = [McpSession(server.url, "127.0.0.5") for _ in range(2)]
        assert [session.open().status_code for session in held] == [200, 200]
        refused = McpSession(server.url, "127.0.0.5").open()
        assert refused.status_code == 503, refused.text
        assert refused.json()["code"] == "CLIENT_QUOTA_REACHED"
        assert refused.headers["retry-after"] == "30"
        other = McpSession(server.url, "127.0.0.6")
        assert other.open().status_code == 200
        assert held[0].delete() == 200
        again = McpSession(server.url, "127.0.0.5")
        assert again.open().status_code == 200 and again.id is not None
        assert server.app.state.session_quota.open == {"127.0.0.5": 2, "127.0.0.6": 1}
        for session in (held[1], other, again):
            assert session.delete() == 200
        assert server.app.state.session_quota.open == {}


@pytest.mark.parametrize("number", ["1e999", "-1e999", "NaN", "Infinity"])
def test_a_number_json_cannot_hold_finite_is_refused_not_read_as_no_seed(number: str) -> None:
    # The MCP SDK re-serialises a call's arguments, writing an infinite seed as null: the
    # tool then started an episode with no seed at all. REST refuses such a seed (422).
    with LiveServer() as server:
        session = McpSession(server.url)
        session.open()
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "reset_episode", "arguments": {"task_id": TASK, "seed": "SEED"}},
        }
        call = json.dumps(request).replace('"SEED"', number)  # json.dumps writes no 1e999
        headers = {**session.headers(), "content-type": "application/json"}
        refused = session.http.post(session.url, content=call, headers=headers)
        assert (refused.status_code, refused.json()["code"]) == (422, "INVALID_JSON")
        assert number in refused.json()["detail"]
        assert session.reset()["structuredContent"]["observation"]["task_id"] == TASK
        rest = httpx.post(
            f"{server.url}/reset",
            content=f'{{"task_id": "{TASK}", "seed": {number}}}',
            headers={"content-type": "application/json"},
        )
        assert rest.status_code == 422
        session.delete()
