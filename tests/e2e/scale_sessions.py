"""64 concurrent sessions against a server address (one process, workers, or replicas behind
a balancer): REST episodes by id and /ws sessions, each checking it only ever sees itself."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from websockets.sync.client import connect

from dataclean_env.settings import Settings
from dataclean_env.tasks.fixed import load_metadata

ROOT = Path(__file__).resolve().parents[2]
PLANS = {e["task_id"]: e["solution"] for e in load_metadata(Settings().datasets_dir)}
TASKS = list(PLANS)
REST_SESSIONS = 48
WS_SESSIONS = 16


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen | None = None, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{url}: process exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer /health in {seconds} s")


def start_uvicorn(port: int, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "dataclean_env.server.app:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def rest_session(url: str, index: int) -> int:
    """One REST episode by id (body, query or header by turn); returns the steps it took."""
    episode_id = f"scale-{index}"
    task = TASKS[index % len(TASKS)]
    how = index % 3
    with httpx.Client(base_url=url, timeout=60) as client:

        def post(path: str, body: dict) -> dict:
            if how == 0:
                response = client.post(path, json={**body, "episode_id": episode_id})
            elif how == 1:
                response = client.post(path, params={"episode_id": episode_id}, json=body)
            else:
                response = client.post(path, headers={"X-Episode-Id": episode_id}, json=body)
            assert response.status_code == 200, response.text
            return response.json()

        first = post(f"/reset/{task}", {})
        assert first["observation"]["episode_id"] == episode_id
        for step, action in enumerate(PLANS[task], start=1):
            answer = post(f"/step/{task}", action)
            assert answer["observation"]["episode_id"] == episode_id, answer["observation"]
            assert answer["observation"]["task_id"] == task
            assert answer["observation"]["step"] == step
        state = client.get("/state", params={"episode_id": episode_id}).json()
        assert state["step_count"] == len(PLANS[task]) and state["task_id"] == task
        return len(PLANS[task])


def ws_session(url: str, index: int) -> int:
    task = TASKS[index % len(TASKS)]
    with connect(url.replace("http://", "ws://") + "/ws", open_timeout=60) as ws:
        ws.send(
            json.dumps({"type": "reset", "data": {"task_id": task, "episode_id": f"ws-s{index}"}})
        )
        first = json.loads(ws.recv(timeout=60))["data"]["observation"]
        assert (first["episode_id"], first["task_id"]) == (f"ws-s{index}", task)
        for step, action in enumerate(PLANS[task], start=1):
            ws.send(json.dumps({"type": "step", "data": action}))
            observation = json.loads(ws.recv(timeout=60))["data"]["observation"]
            assert observation["episode_id"] == f"ws-s{index}"
            assert observation["step"] == step
        return len(PLANS[task])


def run_sessions(url: str) -> int:
    """48 REST and 16 /ws sessions at once; the number of steps they took, all checked."""
    with ThreadPoolExecutor(REST_SESSIONS + WS_SESSIONS) as pool:
        rest = [pool.submit(rest_session, url, i) for i in range(REST_SESSIONS)]
        ws = [pool.submit(ws_session, url, i) for i in range(WS_SESSIONS)]
        return sum(f.result(timeout=600) for f in rest + ws)


def default_episode_round_trip(url: str) -> None:
    """A reset without id gives the task's default episode; its id, sent back, reaches it."""
    with httpx.Client(base_url=url, timeout=60) as client:
        first = client.post("/reset/easy_dedup_rename").json()
        given = first["observation"]["episode_id"]
        step = client.post("/step/easy_dedup_rename", json={"operation": "remove_duplicates"})
        assert step.json()["observation"]["step"] == 1
        by_id = client.post("/step", json={"episode_id": given, "operation": "finish"})
        assert by_id.status_code == 200, by_id.text
        assert by_id.json()["observation"]["step"] == 2
