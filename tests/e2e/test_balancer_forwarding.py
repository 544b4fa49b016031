"""deploy/haproxy.cfg tells the replicas who the client is: every request it relays, REST
and the /ws upgrade, carries X-Forwarded-For. The replicas here are a stand-in on 127.0.0.1
that records each request head and answers 200 (a real replica behind HAProxy on loopback
could not tell HAProxy's address from the client's)."""

from __future__ import annotations

import socket
import subprocess
import threading

import httpx
import pytest

from tests.e2e.scale_sessions import free_port, stop, wait_healthy
from tests.e2e.test_scale_replicas import balancer_config


class RecordingReplica:
    """Answers every request with an empty 200 and keeps its head."""

    def __init__(self) -> None:
        self.heads: list[bytes] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(10)
            data = b""
            try:
                while b"\r\n\r\n" not in data and (chunk := connection.recv(65536)):
                    data += chunk
                self.heads.append(data.split(b"\r\n\r\n", 1)[0])
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}"
                )
            except OSError:
                pass

    def close(self) -> None:
        self.sock.close()


def forwarded_for(head: bytes) -> list[bytes]:
    return [
        line.split(b":", 1)[1].strip()
        for line in head.split(b"\r\n")[1:]
        if line.lower().startswith(b"x-forwarded-for:")
    ]


@pytest.mark.needs("haproxy")
def test_haproxy_sends_the_client_address_to_the_replicas(tmp_path) -> None:
    replica = RecordingReplica()
    port = free_port()
    config = tmp_path / "haproxy.cfg"
    config.write_text(balancer_config(port, [replica.port]))
    balancer = subprocess.Popen(["haproxy", "-db", "-f", str(config)])
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, balancer, seconds=30)
        replica.heads.clear()  # health checks and the wait's own requests
        answer = httpx.post(
            f"{url}/step", json={"episode_id": "e1", "operation": "finish"}, timeout=10
        )
        assert answer.status_code == 200
        upgrade = {
            "connection": "upgrade",
            "upgrade": "websocket",
            "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
            "sec-websocket-version": "13",
        }
        httpx.get(f"{url}/ws", headers=upgrade, timeout=10)
    finally:
        stop(balancer)
        replica.close()
    relayed = [h for h in replica.heads if not h.startswith(b"GET /health")]
    assert [h.split(b"\r\n", 1)[0] for h in relayed] == [
        b"POST /step HTTP/1.1",
        b"GET /ws HTTP/1.1",
    ]
    assert [forwarded_for(h) for h in relayed] == [[b"127.0.0.1"], [b"127.0.0.1"]]
