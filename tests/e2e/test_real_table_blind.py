"""A real table in the evaluation mode (`reward_mode=hidden`) over a real uvicorn: no repair
figure reaches the agent before the episode ends, over REST and over /ws, and the exact
figures arrive with the end."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from dataclean_env.client import CleaningAction, DataCleaningClient
from tests.web import LiveServer

# 22 empty volumes set to `-1`: 20 of them are right (rayyan's clean file writes 1 for two)
REPAIR = {
    "operation": "sql",
    "parameters": {"sql": "UPDATE t SET article_jvolumn = '-1' WHERE article_jvolumn IS NULL"},
}
FIGURES = {"precision": 20 / 22, "recall": 20 / 948, "f1": 0.041237113402061855}
# The reward's total is net repair: (20 right - 2 wrong) / 948.
NET_REPAIR = 18 / 948
FIGURE_NAMES = {"precision", "recall", "f1", "net_repair", "repair", "score", "cells_changed"}


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


def blind(payload: object) -> bool:
    """No repair figure anywhere in `payload`: each such field absent or null."""
    if isinstance(payload, dict):
        return all(
            (value is None if key in FIGURE_NAMES else blind(value))
            for key, value in payload.items()
        )
    if isinstance(payload, list):
        return all(blind(item) for item in payload)
    return True


def test_rest_shows_no_repair_figure_before_the_end(server: LiveServer) -> None:
    url = server.url
    body = {"reward_mode": "hidden", "episode_id": "blind-rayyan"}
    first = httpx.post(f"{url}/reset/rayyan", json=body, timeout=30).json()
    step = httpx.post(f"{url}/step", json={"episode_id": "blind-rayyan", **REPAIR}, timeout=30)
    state = httpx.get(f"{url}/state", params={"episode_id": "blind-rayyan"}, timeout=30)
    assert step.json()["observation"]["message"] == "sql: article_jvolumn (22)."
    for seen in (first, step.json(), state.json()):
        assert seen["reward"] is None and blind(seen), seen
    end = httpx.post(
        f"{url}/step", json={"episode_id": "blind-rayyan", "operation": "finish"}, timeout=30
    ).json()
    assert end["done"] is True and not blind(end)
    repair = end["info"]["repair"]
    assert (repair["precision"], repair["recall"], repair["f1"]) == tuple(FIGURES.values())
    assert repair["cells_changed"] == 22
    assert end["reward"]["f1"] == round(FIGURES["f1"], 4)
    assert end["reward"]["total"] == end["reward"]["net_repair"] == round(NET_REPAIR, 4)


def test_ws_shows_no_repair_figure_before_the_end(server: LiveServer) -> None:
    with DataCleaningClient(base_url=server.url).sync() as env:
        first = env.reset(task_id="rayyan", reward_mode="hidden")
        step = env.step(CleaningAction(**REPAIR))
        state = env.state()
        for seen in (first.observation, step.observation):
            assert seen.score is None and blind(seen.model_dump()), seen.info
        assert state.reward is None and state.repair is None
        end = env.step(CleaningAction(operation="finish"))
    assert end.done is True and not blind(end.observation.model_dump())
    repair = end.observation.info["repair"]
    assert (repair["precision"], repair["recall"], repair["f1"]) == tuple(FIGURES.values())
    assert end.reward == NET_REPAIR
