"""A GRPO batch from one host on a default server, and the per-client quotas of the public
profile, over real HTTP and /ws against uvicorn on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as sync_connect

from dataclean_env.leaderboard import tokens
from dataclean_env.remote import RemoteDataCleaningEnv
from dataclean_env.settings import Settings
from tests.web import LiveServer

pytestmark = pytest.mark.e2e

ROLLOUTS = 128
TASK = "easy_dedup_rename"
STEPS = [
    {"operation": "remove_duplicates", "parameters": {}},
    {"operation": "finish", "parameters": {}},
]


def socket_to(url: str, headers: dict[str, str] | None = None) -> connect:
    # No handshake timeout or pings: on a busy machine a wait is not a failure.
    return connect(
        f"{url.replace('http', 'ws', 1)}/ws",
        additional_headers=headers,
        open_timeout=None,
        ping_interval=None,
    )


async def answer(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    """The frame that answers `message` (or the refusal the server sent before it)."""
    with contextlib.suppress(ConnectionClosed):
        await ws.send(json.dumps(message))
    frame: dict[str, Any] = json.loads(await ws.recv())
    return frame


async def rollout(url: str, seed: int) -> dict[str, Any]:
    """One rollout on its own socket: reset, the steps, the last frame."""
    async with socket_to(url) as ws:
        frame = await answer(ws, {"type": "reset", "data": {"task_id": TASK, "seed": seed}})
        for step in STEPS:
            if frame["type"] != "observation":
                break
            frame = await answer(ws, {"type": "step", "data": step})
        return frame


async def batch(url: str, count: int) -> list[dict[str, Any]]:
    return await asyncio.gather(*(rollout(url, seed) for seed in range(count)))


def test_128_concurrent_rollouts_from_one_address_all_complete(tmp_path: Path) -> None:
    with LiveServer(Settings(leaderboard_db=tmp_path / "lb.sqlite3")) as server:
        frames = asyncio.run(batch(server.url, ROLLOUTS))
    refused = [frame["data"] for frame in frames if frame["type"] != "observation"]
    assert refused == []
    assert [frame["data"]["done"] for frame in frames] == [True] * ROLLOUTS


async def held_open(url: str, count: int, headers: dict[str, str] | None = None) -> list[str]:
    """Open `count` sessions at once, each reset and held, then one more: every frame type."""
    sockets = [await socket_to(url, headers) for _ in range(count + 1)]
    kinds = []
    try:
        for ws in sockets:
            frame = await answer(ws, {"type": "reset", "data": {"task_id": TASK}})
            kinds.append(frame["data"].get("code") if frame["type"] == "error" else frame["type"])
    finally:
        for ws in sockets:
            await ws.close()
    return kinds


def public(tmp_path: Path, **settings: Any) -> Settings:
    return Settings(profile="public", leaderboard_db=tmp_path / "lb.sqlite3", **settings)


def test_the_public_profiles_session_quota_refuses_past_it_and_a_token_raises_it(
    tmp_path: Path,
) -> None:
    # Of 32 sessions, 3 per address and 6 per token (both within the quarter, 8).
    settings = public(tmp_path, max_sessions=32, sessions_per_client=3, sessions_per_token=6)
    with LiveServer(settings) as server:
        _, token = tokens.create(server.app.state.leaderboard.open(), "team-q", "m")
        anonymous = asyncio.run(held_open(server.url, 3))
        with_token = asyncio.run(held_open(server.url, 6, {"Authorization": f"Bearer {token}"}))
        # MCP sessions past the quota (from another address, whose places are all free):
        # 503 with Retry-After.
        mcp = mcp_past_quota(server, 3)
    assert anonymous == ["observation"] * 3 + ["CLIENT_QUOTA_REACHED"]
    assert with_token == ["observation"] * 6 + ["CLIENT_QUOTA_REACHED"]
    assert mcp == (503, "CLIENT_QUOTA_REACHED", "30")


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "quota-test", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def mcp_past_quota(server: LiveServer, quota: int) -> tuple[int, str, str | None]:
    """Open `quota` MCP sessions, then one more: the last answer's status, code, Retry-After."""
    transport = httpx.HTTPTransport(local_address="127.0.0.7")
    with httpx.Client(
        base_url=server.url, headers=MCP_HEADERS, transport=transport, timeout=60
    ) as http:
        opened = [http.post("/mcp", json=INITIALIZE) for _ in range(quota)]
        assert [answer.status_code for answer in opened] == [200] * quota
        refused = http.post("/mcp", json=INITIALIZE)
        for answer in opened:
            http.delete("/mcp", headers={"Mcp-Session-Id": answer.headers["mcp-session-id"]})
    return refused.status_code, refused.json()["code"], refused.headers.get("retry-after")


def test_an_unknown_submitter_token_is_refused_not_taken_as_anonymous(tmp_path: Path) -> None:
    with LiveServer(public(tmp_path)) as server:
        kinds = asyncio.run(held_open(server.url, 0, {"Authorization": "Bearer dce_unknown"}))
    assert kinds == ["INVALID_TOKEN"]


def test_the_episode_quota_is_at_most_a_quarter_of_the_store(tmp_path: Path) -> None:
    # DCE_MAX_EPISODES=8 with a quota of 256 asked: one client holds 2 (8 / 4), not all 8.
    settings = Settings(
        leaderboard_db=tmp_path / "lb.sqlite3", max_episodes=8, episodes_per_client=256
    )
    with LiveServer(settings) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        answers = [
            http.post("/reset", json={"task_id": TASK, "episode_id": f"mine-{n}"}) for n in range(3)
        ]
        other = held_from(server, "127.0.0.5", "/reset", {"task_id": TASK, "episode_id": "theirs"})
    assert [answer.status_code for answer in answers] == [200, 200, 503]
    assert answers[2].json()["code"] == "CLIENT_QUOTA_REACHED"
    assert answers[2].headers["retry-after"].isdigit()
    assert other == 200  # another client still has room


def held_from(server: LiveServer, source: str, path: str, body: dict[str, Any]) -> int:
    """The status of a POST sent from another loopback address."""
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(base_url=server.url, transport=transport, timeout=60) as http:
        return http.post(path, json=body).status_code


def test_the_public_profiles_episode_quota_refuses_past_it(tmp_path: Path) -> None:
    settings = public(tmp_path, episodes_per_client=2)
    with LiveServer(settings) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        answers = [
            http.post("/reset", json={"task_id": TASK, "episode_id": f"ep-{n}"}) for n in range(3)
        ]
    assert [answer.status_code for answer in answers] == [200, 200, 503]
    assert answers[2].json()["code"] == "CLIENT_QUOTA_REACHED"
    assert answers[2].headers["retry-after"].isdigit()


def test_the_remote_client_opens_its_session_under_its_token(tmp_path: Path) -> None:
    """An address at its quota still opens sessions with `RemoteDataCleaningEnv(token=...)`:
    they count against the token."""
    settings = public(tmp_path, max_sessions=32, sessions_per_client=2)
    with LiveServer(settings) as server:
        _, token = tokens.create(server.app.state.leaderboard.open(), "team-r", "m")
        ws_url = f"ws://127.0.0.1:{server.port}/ws"
        with (
            sync_connect(ws_url, open_timeout=300) as one,
            sync_connect(ws_url, open_timeout=300) as two,
        ):
            for held in (one, two):  # the address's quota, held
                held.send(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
                assert json.loads(held.recv(timeout=300))["type"] == "observation"
            remote = RemoteDataCleaningEnv(server.url, token=token, connect_timeout_s=300)
            try:
                served = remote.reset(seed=1, task_id=TASK)
            finally:
                remote.close()
    assert served.observation.task_id == TASK and served.observation.step == 0
