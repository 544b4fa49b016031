"""Issue 11, defects 4, 7 and 9: episode ids that survive other clients, cannot be taken over,
reveal nothing, and a clear error to reset on; a full store and fast creators get told when
to come back (Retry-After)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings
from tests.support import ok

TASK = "easy_dedup_rename"
PROBE = {"operation": "validate_schema"}


@pytest.fixture
def api() -> TestClient:
    with TestClient(create_app(Settings())) as client:
        yield client


def test_the_id_an_empty_reset_returns_survives_other_resets(api: TestClient) -> None:
    """16 clients reset without an id, then each steps 10 times with the id it got: every
    step lands on its own episode (issue 11: 142 of 160 steps got 404)."""
    ids = [ok(api.post(f"/reset/{TASK}"))["info"]["episode_id"] for _ in range(16)]
    assert len(set(ids)) == 16
    for round_ in range(1, 11):
        for episode_id in ids:
            body = ok(api.post(f"/step/{TASK}", json=PROBE, params={"episode_id": episode_id}))
            assert body["info"]["episode_id"] == episode_id
            assert body["observation"]["step"] == round_
    # calls without an id use the latest default episode
    state = ok(api.get(f"/state/{TASK}"))
    assert state["episode_id"] == ids[-1] and state["step_count"] == 10


def test_server_issued_ids_are_unguessable(api: TestClient) -> None:
    ids = {ok(api.post(f"/reset/{TASK}"))["info"]["episode_id"] for _ in range(50)}
    assert len(ids) == 50
    for episode_id in ids:
        # 16 random bytes, url-safe base64: 128 bits nobody can guess
        assert re.fullmatch(r"dce:[A-Za-z0-9_-]{22}", episode_id), episode_id


def test_a_server_issued_id_cannot_be_taken_over(api: TestClient) -> None:
    mine = ok(api.post(f"/reset/{TASK}"))["info"]["episode_id"]
    ok(api.post(f"/step/{TASK}", json=PROBE, params={"episode_id": mine}))
    before = ok(api.get("/state", params={"episode_id": mine}))
    for carrier in ({"json": {"episode_id": mine}}, {"params": {"episode_id": mine}}):
        refused = api.post(f"/reset/{TASK}", **carrier)
        assert refused.status_code == 422
        assert refused.json()["code"] == "INVALID_ACTION"
        assert "issued by the server" in refused.json()["detail"]
    assert ok(api.get("/state", params={"episode_id": mine})) == before


def test_absent_and_elsewhere_answer_alike(api: TestClient) -> None:
    """No existence oracle: an id of another task's episode answers exactly like an id that
    does not exist."""
    ok(api.post("/reset/medium_missing_dtype", json={"episode_id": "taken"}))
    with TestClient(create_app(Settings())) as fresh:
        for method, path, kwargs in [
            ("POST", f"/step/{TASK}", {"json": PROBE}),
            ("GET", f"/state/{TASK}", {}),
            ("POST", "/step", {"json": {"task_id": TASK, **PROBE}}),
        ]:
            elsewhere = api.request(method, path, params={"episode_id": "taken"}, **kwargs)
            absent = fresh.request(method, path, params={"episode_id": "taken"}, **kwargs)
            assert elsewhere.status_code == absent.status_code == 404
            assert elsewhere.json() == absent.json()
            assert absent.json()["code"] == "UNKNOWN_EPISODE"


def test_unknown_episode_is_the_documented_signal_to_reset(api: TestClient) -> None:
    """After a restart (a fresh app: episodes live in memory) an id answers 404
    UNKNOWN_EPISODE, whose detail says to reset."""
    episode_id = ok(api.post(f"/reset/{TASK}"))["info"]["episode_id"]
    with TestClient(create_app(Settings())) as restarted:
        gone = restarted.post(f"/step/{TASK}", json=PROBE, params={"episode_id": episode_id})
        assert gone.status_code == 404
        assert gone.json()["code"] == "UNKNOWN_EPISODE"
        assert "reset" in gone.json()["detail"] and "restarted" in gone.json()["detail"]


def test_full_store_answers_503_with_retry_after() -> None:
    with TestClient(create_app(Settings(max_episodes=1))) as small:
        ok(small.post(f"/reset/{TASK}", json={"episode_id": "one"}))
        full = small.post(f"/reset/{TASK}", json={"episode_id": "two"})
        assert full.status_code == 503 and full.json()["code"] == "SERVER_FULL"
        # when "one" turns idle for the default idle window (300 s), counted from its reset
        assert 1 <= int(full.headers["retry-after"]) <= 300
        assert "none idle for 300 s" in full.json()["detail"]
        # an empty reset never 503s: the new default does not count
        ok(small.post(f"/reset/{TASK}"))


def test_resets_are_rate_limited_per_client() -> None:
    settings = Settings(creation_burst=3, creation_rate_per_second=0.01)
    with TestClient(create_app(settings)) as limited:
        for name in ("a", "b", "c"):
            ok(limited.post(f"/reset/{TASK}", json={"episode_id": name}))
        refused = limited.post(f"/reset/{TASK}", json={"episode_id": "d"})
        assert refused.status_code == 429 and refused.json()["code"] == "RATE_LIMITED"
        assert refused.headers["retry-after"] == "100"  # one token at 0.01 per second
        assert limited.get("/state", params={"episode_id": "d"}).status_code == 404
        ok(limited.post(f"/step/{TASK}", json=PROBE, params={"episode_id": "c"}))  # steps are not
