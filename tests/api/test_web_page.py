"""The web page's server side: the page and its assets, GET / for browsers, the table viewer,
the heuristic agent's next action, and the generated-instance finder."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.schemas import Action
from dataclean_env.tasks import default_registry
from tests.support import ok

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


# ── the page ────────────────────────────────────────────────────────────────


def test_browsers_asking_for_root_are_sent_to_the_page(client: TestClient) -> None:
    answer = client.get("/", headers={"Accept": BROWSER_ACCEPT}, follow_redirects=False)
    assert answer.status_code == 307
    assert answer.headers["location"] == "/web"
    for accept in ("application/json", "*/*"):
        body = ok(client.get("/", headers={"Accept": accept}))
        assert body["status"] == "running"
        assert "GET /web" in body["endpoints"] and "GET /ui" in body["endpoints"]


@pytest.mark.parametrize("path", ["/web", "/ui", "/web/", "/ui/"])
def test_the_page_is_served_with_a_strict_content_policy(client: TestClient, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")
    assert '<script src="/static/app.js" defer></script>' in answer.text
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy
    # Only the page itself and a Space's parent (huggingface.co) may frame it.
    assert policy.endswith("; frame-ancestors 'self' https://huggingface.co")


def test_assets_are_served_and_nothing_else(client: TestClient) -> None:
    script = client.get("/static/app.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert client.get("/static/app.css").headers["content-type"].startswith("text/css")
    for bad in ("/static/index.htm", "/static/..%2Fpyproject.toml", "/static/.env", "/static/x.py"):
        answer = client.get(bad)
        assert answer.status_code == 404, bad
        assert answer.json()["code"] == "NOT_FOUND"


def test_the_page_asks_only_this_server() -> None:
    from dataclean_env.server.http.routes.web import static_dir

    for name in ("index.html", "app.js", "app.css"):
        text = (static_dir() / name).read_text(encoding="utf-8")
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
        assert "https://" not in text and "//cdn" not in text
    script = (static_dir() / "app.js").read_text(encoding="utf-8")
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script


# ── the table viewer ────────────────────────────────────────────────────────


def table(client: TestClient, episode_id: str, **query: int) -> dict[str, Any]:
    return ok(client.get(f"/episodes/{episode_id}/table", params=query))


def as_sample(row: dict[str, Any], columns: list[str]) -> dict[str, Any]:
    return {c: "NULL" if v is None else v for c, v in zip(columns, row["cells"], strict=True)}


def test_the_viewer_shows_the_current_table_and_what_a_step_changed(client: TestClient) -> None:
    first = ok(client.post("/reset/medium_missing_dtype", json={"episode_id": "view-1"}))
    obs = first["observation"]
    page = table(client, "view-1", offset=0, limit=5)
    columns = [c["name"] for c in page["columns"]]
    assert columns == obs["columns"]
    assert {c["name"]: c["missing"] for c in page["columns"]} == obs["missing_values"]
    assert {c["name"]: c["dtype"] for c in page["columns"]} == obs["dtypes"]
    assert [as_sample(r, columns) for r in page["rows"]] == obs["sample_rows"]
    assert page["total_rows"] == 30 and page["step"] == 0 and not page["done"]
    assert all(r["changed"] == {} for r in page["rows"])

    ages_missing = obs["missing_values"]["age"]
    after = ok(
        client.post(
            "/step",
            json={
                "episode_id": "view-1",
                "operation": "fill_missing",
                "parameters": {"strategy": "mean", "column": "age"},
            },
        )
    )
    page = table(client, "view-1", limit=200)
    changed = [r["changed"] for r in page["rows"] if r["changed"]]
    assert changed == [{"age": None}] * ages_missing  # each filled cell was missing
    assert page["step"] == 1 and page["columns"][columns.index("age")]["missing"] == 0
    assert after["observation"]["missing_values"]["age"] == 0


def test_the_viewer_pages_and_refuses_bad_queries(client: TestClient) -> None:
    ok(client.post("/reset/crm", json={"episode_id": "view-2", "seed": 3, "split": "eval"}))
    page = table(client, "view-2", offset=100, limit=50)
    assert page["total_rows"] == 109 and [r["position"] for r in page["rows"]] == list(
        range(100, 109)
    )
    assert page["key"] == "contact_id"
    for query in ({"limit": 0}, {"limit": 201}, {"offset": -1}, {"limit": "x"}):
        answer = client.get("/episodes/view-2/table", params=query)
        assert answer.status_code == 422 and answer.json()["code"] == "INVALID_REQUEST"
    missing = client.get("/episodes/no-such/table")
    assert missing.status_code == 404 and missing.json()["code"] == "UNKNOWN_EPISODE"


def test_the_viewer_is_closed_to_blind_episodes(client: TestClient) -> None:
    # A blind episode (reward_mode="hidden", as every leaderboard episode is): the table
    # viewer is closed to it until it ends; the heuristic's next action is not a view (it
    # is computed from the observation the episode's own client gets) and tells no score.
    for task_id in ("crm", "rayyan"):
        ok(
            client.post(
                f"/reset/{task_id}",
                json={"episode_id": f"blind-{task_id}", "reward_mode": "hidden"},
            )
        )
        answer = client.get(f"/episodes/blind-{task_id}/table")
        assert answer.status_code == 403, task_id
        assert answer.json()["code"] == "VIEW_REFUSED"
        suggested = ok(client.post(f"/episodes/blind-{task_id}/heuristic"))
        assert set(suggested) == {"episode_id", "agent", "action"}
        assert set(suggested["action"]) <= {"operation", "parameters"}


# ── the heuristic agent ─────────────────────────────────────────────────────


def in_process_actions(task_id: str, seed: int, split: str) -> list[dict[str, Any]]:
    episode = Episode("local", default_registry().make(task_id, seed, split))
    agent, actions = HeuristicAgent(), []
    while not episode.done:
        action = agent.act(episode.observation().model_dump(mode="json"))
        actions.append(action)
        episode.step(Action(**action))
    return actions


@pytest.mark.parametrize(("task_id", "seed"), [("hard_full_pipeline", None), ("crm", 0)])
def test_the_heuristic_endpoint_plays_the_agents_policy(
    client: TestClient, task_id: str, seed: int | None
) -> None:
    body = {"episode_id": f"h-{task_id}", "split": "eval"}
    if seed is not None:
        body["seed"] = seed
    ok(client.post(f"/reset/{task_id}", json=body))
    actions, result = [], None
    for _ in range(100):
        answer = ok(client.post(f"/episodes/h-{task_id}/heuristic"))
        assert answer["agent"] == "heuristic-baseline"
        actions.append(answer["action"])
        result = ok(client.post("/step", json={"episode_id": f"h-{task_id}", **answer["action"]}))
        if result["done"]:
            break
    assert actions == in_process_actions(task_id, seed, "eval")
    assert result["done"] and result["reward"]["total"] == 0.9999
    finished = client.post(f"/episodes/h-{task_id}/heuristic")
    assert finished.status_code == 409 and finished.json()["code"] == "EPISODE_FINISHED"

    # A reset with the same id starts a fresh agent.
    ok(client.post(f"/reset/{task_id}", json=body))
    assert ok(client.post(f"/episodes/h-{task_id}/heuristic"))["action"] == actions[0]


# Instances on which the heuristic's policy takes a step the table refuses (a type
# conversion the values do not allow yet, a text rewrite of a number column).
REFUSING = [("fix_types", 0, "eval"), ("orders", 0, "eval"), ("inventory", 5, "eval")]


@pytest.mark.parametrize(("task_id", "seed", "split"), REFUSING)
def test_the_heuristic_endpoint_never_offers_a_refused_action(
    client: TestClient, task_id: str, seed: int, split: str
) -> None:
    runner = Episode("runner", default_registry().make(task_id, seed, split))
    agent, taken, refused = HeuristicAgent(), [], 0
    while not runner.done:
        action = agent.act(runner.observation().model_dump(mode="json"))
        try:
            runner.step(Action(**action))
            taken.append(action)
        except EnvError:
            refused += 1
    assert refused > 0  # the policy itself does meet refusals here

    episode_id = f"never-refused-{task_id}"
    ok(
        client.post(
            f"/reset/{task_id}", json={"episode_id": episode_id, "seed": seed, "split": split}
        )
    )
    offered, result = [], None
    for _ in range(100):
        action = ok(client.post(f"/episodes/{episode_id}/heuristic"))["action"]
        offered.append(action)
        result = ok(client.post("/step", json={"episode_id": episode_id, **action}))
        if result["done"]:
            break
    assert offered == taken  # the runner's steps, without the ones refused
    assert result is not None and result["reward"]["total"] == runner.reward.total


def test_the_heuristic_endpoint_needs_a_live_episode(client: TestClient) -> None:
    answer = client.post("/episodes/nobody/heuristic")
    assert answer.status_code == 404 and answer.json()["code"] == "UNKNOWN_EPISODE"


# ── generated instances ─────────────────────────────────────────────────────


def test_instances_of_a_difficulty(client: TestClient) -> None:
    body = ok(
        client.get(
            "/tasks/crm/instances", params={"split": "eval", "difficulty": "hard", "limit": 3}
        )
    )
    assert body == {
        "task_id": "crm",
        "split": "eval",
        "instances": [
            {"seed": 3, "difficulty": "hard"},
            {"seed": 5, "difficulty": "hard"},
            {"seed": 9, "difficulty": "hard"},
        ],
    }
    started = ok(client.post("/reset/crm", json={"seed": 5, "split": "eval"}))
    assert "hard" in started["observation"]["task_description"]


def test_instances_of_a_seeded_claims_family(client: TestClient) -> None:
    body = ok(
        client.get(
            "/tasks/error_detection/instances",
            params={"split": "eval", "difficulty": "hard", "limit": 3},
        )
    )
    assert body == {
        "task_id": "error_detection",
        "split": "eval",
        "instances": [
            {"seed": 1, "difficulty": "hard"},
            {"seed": 3, "difficulty": "hard"},
            {"seed": 4, "difficulty": "hard"},
        ],
    }
    started = ok(client.post("/reset/error_detection", json={"seed": 4, "split": "eval"}))
    assert "rows, hard)" in started["observation"]["task_description"]
    for task_id in ("standardisation", "audit_pipeline"):
        body = ok(client.get(f"/tasks/{task_id}/instances", params={"limit": 2}))
        assert len(body["instances"]) == 2, task_id


def test_instances_refuse_what_has_none(client: TestClient) -> None:
    fixed = client.get("/tasks/easy_dedup_rename/instances")
    assert fixed.status_code == 404 and fixed.json()["code"] == "NO_INSTANCES"
    showcase = client.get("/tasks/detection_showcase/instances")
    assert showcase.status_code == 404
    assert showcase.json() == {
        "detail": "'detection_showcase' is not a generated family; it has one instance",
        "code": "NO_INSTANCES",
    }
    unknown = client.get("/tasks/nope/instances")
    assert unknown.status_code == 404 and unknown.json()["code"] == "UNKNOWN_TASK"
    for query in ({"difficulty": "expert"}, {"split": "dev"}, {"limit": 51}):
        answer = client.get("/tasks/crm/instances", params=query)
        assert answer.status_code == 422 and answer.json()["code"] == "INVALID_REQUEST"
