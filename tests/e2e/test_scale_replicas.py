"""Three replicas behind HAProxy with deploy/haproxy.cfg's configuration: 64 concurrent sessions (REST by
episode id, /ws by connection) with no cross-talk, and every replica doing part of the work."""

from __future__ import annotations

import os
import subprocess

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from dataclean_env.server.processes.balancer import EXAMPLE_SERVERS, HEADER, config
from dataclean_env.settings import Settings
from tests.e2e.scale_sessions import (
    ROOT,
    default_episode_round_trip,
    free_port,
    run_sessions,
    start_uvicorn,
    stop,
    wait_healthy,
)

REPLICAS = 3


def balancer_config(port: int, replicas: list[int]) -> str:
    """The configuration of deploy/haproxy.cfg, for this test's bind address and replicas."""
    servers = [f"127.0.0.1:{p}" for p in replicas]
    return config(f"127.0.0.1:{port}", servers, Settings(), check=True)


def test_deploy_haproxy_cfg_is_the_balancer_s_configuration() -> None:
    text = HEADER + config("0.0.0.0:7860", EXAMPLE_SERVERS, Settings(), check=True)
    assert (ROOT / "deploy" / "haproxy.cfg").read_text() == text


def steps_served(url: str) -> dict[str, float]:
    text = httpx.get(f"{url}/metrics", timeout=30).text
    return {
        sample.labels["door"]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "dce_step_seconds_count"
    }


@pytest.mark.needs("haproxy")
def test_replicas_behind_haproxy_keep_sessions_apart_and_share_the_load(tmp_path) -> None:
    ports = [free_port() for _ in range(REPLICAS)]
    front = free_port()
    config = tmp_path / "haproxy.cfg"
    config.write_text(balancer_config(front, ports))
    check = subprocess.run(["haproxy", "-c", "-f", str(config)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    replicas = [
        start_uvicorn(port, {**os.environ, "DCE_PROCESS_INDEX": str(i), "DCE_PROCESSES": "3"})
        for i, port in enumerate(ports)
    ]
    balancer = None
    try:
        for port, process in zip(ports, replicas, strict=True):
            wait_healthy(f"http://127.0.0.1:{port}", process)
        balancer = subprocess.Popen(["haproxy", "-db", "-f", str(config)])
        url = f"http://127.0.0.1:{front}"
        wait_healthy(url, balancer, seconds=30)
        run_sessions(url)
        default_episode_round_trip(url)
        served = [steps_served(f"http://127.0.0.1:{port}") for port in ports]
    finally:
        if balancer is not None:
            stop(balancer)
        for process in replicas:
            stop(process)
    assert all(s.get("rest", 0) > 0 for s in served), served
    assert all(s.get("ws", 0) > 0 for s in served), served
