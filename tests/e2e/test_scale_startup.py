"""Cold start: the app serves /health without importing OpenEnv's server, gradio or fastmcp,
and mounts OpenEnv's routes (/ws, /schema) when they are first needed."""

from __future__ import annotations

from tests.support import probe_json

PROBE = """
import json, sys
from fastapi.testclient import TestClient
from dataclean_env.server.app import create_app
from dataclean_env.settings import Settings

app = create_app(Settings(openenv_mount="lazy"))
client = TestClient(app)
health = client.get("/health").json()
loaded_before = sorted(m for m in ("gradio", "fastmcp", "openenv.core.env_server.http_server")
                       if m in sys.modules)
schema = client.get("/schema")
with client.websocket_connect("/ws") as ws:
    ws.send_text(json.dumps({"type": "reset", "data": {"task_id": "easy_dedup_rename"}}))
    frame = json.loads(ws.receive_text())
gradio_serving = "gradio" in sys.modules  # after /ws served an episode
from openenv.core import EnvClient  # the whole package is still there for those who want it
print(json.dumps({
    "health": health, "before": loaded_before, "schema": schema.status_code,
    "action_schema": "action" in schema.json(), "frame": frame["type"],
    "gradio_serving": gradio_serving, "gradio_after": "gradio" in sys.modules, "client": EnvClient.__name__,
}))
"""


def test_health_answers_before_openenv_is_imported_and_ws_mounts_on_demand() -> None:
    result = probe_json(PROBE)
    assert result["health"] == {
        "status": "healthy",
        "tasks_loaded": result["health"]["tasks_loaded"],
    }
    assert result["health"]["tasks_loaded"] >= 4
    assert result["before"] == []
    assert result["schema"] == 200 and result["action_schema"] is True
    assert result["frame"] == "observation"
    assert result["client"] == "EnvClient"
    # Serving never imports gradio; openenv's client package does (docs/install.md).
    assert (result["gradio_serving"], result["gradio_after"]) == (False, True)
