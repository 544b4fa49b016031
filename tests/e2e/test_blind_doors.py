"""Blind means blind at every door: REST reset/step/state, /ws step/state, /mcp's tools,
`/episodes/{id}/table` and `/episodes/{id}/heuristic`, over real HTTP, WebSocket and MCP
against a live uvicorn, for a generated family and a real table. Each door's answer for a
running blind episode holds none of the fields `reward_visibility` hides; the same door
for a non-blind episode of the same instance holds every one the task has (so the test
fails if a door stops sending a field, or starts sending it blind)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from fastmcp import Client
from websockets.sync.client import connect

from dataclean_env.schemas import Observation
from dataclean_env.server.store.reward_visibility import HIDDEN_FIELDS, SCORE_INFO
from tests.support import ok
from tests.web import LiveServer

pytestmark = pytest.mark.e2e

SEED = 4
SHOW = {"operation": "show_rows", "parameters": {"offset": 1}}  # accepted, changes no cell
HIDDEN = set(HIDDEN_FIELDS) | set(SCORE_INFO)
# Maps keyed by column name: a column may be called anything, so they are not searched.
BY_COLUMN = {"sample_rows", "column_profiles", "missing_values", "dtypes", "rows", "columns"}
# What a non-blind answer shows, per door kind: the score figures of every task, and a real
# table's repair figures besides.
SHOWN = {
    "rest step": {"reward", "score", "exact"},
    "state": {"reward"},
    "observation": {"reward", "score", "score_components", "exact"},
}
REPAIR = {"rest step": {"repair"}, "state": {"repair"}, "observation": {"repair"}}


def shown(answer: Any) -> set[str]:
    """The hidden names that carry a value anywhere in `answer`."""
    found: set[str] = set()
    if isinstance(answer, dict):
        for key, value in answer.items():
            if key in HIDDEN and value is not None:
                found.add(key)
            if key not in BY_COLUMN:
                found |= shown(value)
    elif isinstance(answer, list):
        for item in answer:
            found |= shown(item)
    return found


def rest_doors(url: str, task: str, blind: bool) -> dict[str, Any]:
    mode = "hidden" if blind else "absolute"
    episode = f"doors-{task}-{mode}"
    reset = {"task_id": task, "seed": SEED, "episode_id": episode, "reward_mode": mode}
    answers = {"rest reset": ok(httpx.post(f"{url}/reset", json=reset, timeout=60))}
    step = {"episode_id": episode, **SHOW}
    answers["rest step"] = ok(httpx.post(f"{url}/step", json=step, timeout=60))
    answers["rest state"] = ok(httpx.get(f"{url}/state", params={"episode_id": episode}))
    answers["table"] = httpx.get(f"{url}/episodes/{episode}/table", params={"limit": 200})
    answers["heuristic"] = httpx.post(f"{url}/episodes/{episode}/heuristic", timeout=60)
    return answers


def ws_doors(port: int, task: str, blind: bool) -> dict[str, Any]:
    mode = "hidden" if blind else "absolute"
    answers = {}
    with connect(f"ws://127.0.0.1:{port}/ws", open_timeout=60) as ws:
        for name, message in (
            ("ws reset", {"type": "reset", "data": {"task_id": task, "seed": SEED, "reward_mode": mode}}),
            ("ws step", {"type": "step", "data": SHOW}),
            ("ws state", {"type": "state"}),
        ):  # fmt: skip
            ws.send(json.dumps(message))
            answers[name] = json.loads(ws.recv(timeout=60))["data"]
    return answers


async def mcp_doors(url: str, task: str, blind: bool) -> dict[str, Any]:
    mode = "hidden" if blind else "absolute"
    async with Client(f"{url}/mcp") as client:
        reset = {"task_id": task, "seed": SEED, "reward_mode": mode}
        first = await client.call_tool("reset_episode", reset)
        step = await client.call_tool("show_rows", SHOW["parameters"])
        state = await client.call_tool("episode_state", {})
    return {
        "mcp reset": first.structured_content,
        "mcp step": step.structured_content,
        "mcp state": state.structured_content,
    }


def expected(door: str, task: str) -> set[str]:
    kind = (
        "state" if door.endswith("state") else "rest step" if door.startswith("rest") else "observation"
    )  # fmt: skip
    return SHOWN[kind] | (REPAIR[kind] if task == "rayyan" else set())


@pytest.mark.parametrize("task", ["crm", "rayyan"])
def test_a_blind_episode_hides_its_score_at_every_door_and_a_plain_one_shows_it(
    task: str,
) -> None:
    with LiveServer() as server:
        seen = {
            blind: {
                **rest_doors(server.url, task, blind),
                **ws_doors(server.port, task, blind),
                **asyncio.run(mcp_doors(server.url, task, blind)),
            }
            for blind in (True, False)
        }
    json_doors = [d for d in seen[True] if d not in ("table", "heuristic")]
    assert len(json_doors) == 9
    for door in json_doors:
        assert shown(seen[True][door]) == set(), door
        assert shown(seen[False][door]) == expected(door, task), door
        assert seen[True][door].get("done") in (False, None), door  # still running

    # The viewer: refused while blind (its rows would cost show_rows steps), open otherwise.
    refused = seen[True]["table"]
    assert (refused.status_code, refused.json()["code"]) == (403, "VIEW_REFUSED")
    assert len(ok(seen[False]["table"])["rows"]) == min(200, seen[False]["rest state"]["shape"][0])

    # The heuristic helper stays open to blind episodes: it acts on the observation every door
    # shows, which has no hidden field, and answers only an action, the same one it gives the
    # plain episode of the same instance.
    assert HIDDEN.isdisjoint(Observation.model_fields)
    blind_hint, plain_hint = ok(seen[True]["heuristic"]), ok(seen[False]["heuristic"])
    assert set(blind_hint) == {"episode_id", "agent", "action"}
    assert shown(blind_hint) == set()
    assert blind_hint["action"] == plain_hint["action"]
