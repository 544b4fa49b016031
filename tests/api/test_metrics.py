"""/metrics in Prometheus' text format and the JSON request log (DCE_LOG_JSON)."""

from __future__ import annotations

import json
import logging

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings

STEP = "/step/{task_id}"


def samples(client: TestClient) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def value(table: dict, name: str, **labels: str) -> float:
    return table.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_count_requests_errors_steps_engine_time_and_episodes() -> None:
    with TestClient(create_app(Settings(openenv_mount="lazy"))) as client:
        before = samples(client)
        ids = {"episode_id": "metrics-1"}
        assert client.post("/reset/easy_dedup_rename", json=ids).status_code == 200
        assert (
            client.post(
                "/step/easy_dedup_rename", json={"operation": "remove_duplicates", **ids}
            ).status_code
            == 200
        )
        assert (
            client.post("/step/easy_dedup_rename", json={"operation": "nope", **ids}).status_code
            == 422
        )
        assert (
            client.post("/step/easy_dedup_rename", json={"operation": "finish", **ids}).status_code
            == 200
        )
        after = samples(client)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("dce_requests_total", method="POST", route=STEP, status="200") == 2
    assert delta("dce_requests_total", method="POST", route=STEP, status="422") == 1
    assert delta("dce_requests_total", method="POST", route="/reset/{task_id}", status="200") == 1
    assert delta("dce_errors_total", route=STEP, status="422") == 1
    assert delta("dce_errors_total", route=STEP, status="200") == 0
    assert delta("dce_step_seconds_count", door="rest") == 3
    # the engine ran for the reset and all three steps (it is the engine that refuses "nope")
    assert delta("dce_engine_seconds_count") == 4
    assert value(after, "dce_open_episodes") == 1
    assert delta("dce_step_seconds_bucket", door="rest", le="+Inf") == 3


def test_open_episodes_count_defaults_and_leaderboard_episodes(tmp_path) -> None:
    settings = Settings(openenv_mount="lazy", leaderboard_db=tmp_path / "lb.sqlite3")
    with TestClient(create_app(settings)) as client:
        assert value(samples(client), "dce_open_episodes") == 0
        run = {"name": "t", "model": "m", "families": ["crm"], "episodes": 2}
        assert client.post("/leaderboard/runs", json=run).status_code == 200
        assert value(samples(client), "dce_open_episodes") == 2  # the run's two episodes
        assert client.post("/reset/crm", json={}).status_code == 200  # the task's default
        assert client.post("/reset/crm", json={"episode_id": "mine"}).status_code == 200
        assert value(samples(client), "dce_open_episodes") == 4


def test_metrics_count_websocket_sessions_and_ws_steps() -> None:
    with TestClient(create_app(Settings(openenv_mount="lazy"))) as client:
        before = samples(client)
        with client.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"type": "reset", "data": {"task_id": "easy_dedup_rename"}}))
            ws.receive_text()
            during = samples(client)
            ws.send_text(json.dumps({"type": "step", "data": {"operation": "remove_duplicates"}}))
            ws.receive_text()
        after = samples(client)
    assert value(during, "dce_open_sessions") - value(before, "dce_open_sessions") == 1
    assert value(after, "dce_open_sessions") == value(before, "dce_open_sessions")
    # the session's episode is held while the session is, and let go with it
    assert value(during, "dce_open_episodes") - value(before, "dce_open_episodes") == 1
    assert value(after, "dce_open_episodes") == value(before, "dce_open_episodes")
    ws_steps = value(after, "dce_step_seconds_count", door="ws")
    assert ws_steps - value(before, "dce_step_seconds_count", door="ws") == 1


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(record.getMessage()))


def test_json_request_log_names_episode_operation_status_and_time() -> None:
    collect = Collect()
    logger = logging.getLogger("dataclean_env.requests")
    logger.addHandler(collect)
    try:
        with TestClient(create_app(Settings(openenv_mount="lazy", log_json=True))) as client:
            client.post("/reset/easy_dedup_rename", json={"episode_id": "log-1"})
            client.post(
                "/step/easy_dedup_rename",
                json={"action": {"operation": "remove_duplicates"}},
                headers={"X-Episode-Id": "log-1"},
            )
            client.post("/step?episode_id=log-1", json={"operation": "bogus"})
    finally:
        logger.removeHandler(collect)
    reset, step, bad = collect.lines[-3:]
    assert (reset["route"], reset["status"], reset["episode"]) == ("/reset/{task_id}", 200, "log-1")
    assert (step["episode"], step["operation"], step["status"]) == (
        "log-1",
        "remove_duplicates",
        200,
    )
    assert (bad["route"], bad["episode"], bad["operation"], bad["status"]) == (
        "/step",
        "log-1",
        "bogus",
        422,
    )
    assert all(isinstance(line["ms"], float) and line["ms"] > 0 for line in (reset, step, bad))


def test_every_openenv_mount_mode_serves_metrics_and_openenv_routes() -> None:
    for mode in ("eager", "lazy", "background"):
        with TestClient(create_app(Settings(openenv_mount=mode))) as client:
            assert client.get("/metrics").status_code == 200, mode
            assert client.get("/schema").status_code == 200, mode
            paths = [e.split(" ", 1)[1] for e in client.get("/").json()["endpoints"]]
            assert "/schema" in paths and "/ws" in paths and "/metrics" not in paths, mode


def test_json_request_log_cuts_the_client_supplied_names_to_their_valid_lengths() -> None:
    # Before, a refused step's operation was logged whole: 16,000 emoji, 190 KB in one line.
    collect = Collect()
    logger = logging.getLogger("dataclean_env.requests")
    logger.addHandler(collect)
    try:
        with TestClient(create_app(Settings(openenv_mount="lazy", log_json=True))) as client:
            body = {"operation": "\U0001f600" * 16_000, "episode_id": "e" * 5_000}
            assert client.post("/step", json=body).status_code == 422
    finally:
        logger.removeHandler(collect)
    (line,) = collect.lines[-1:]
    assert line["operation"] == "\U0001f600" * 64 + "…"
    assert line["episode"] == "e" * 128 + "…"
