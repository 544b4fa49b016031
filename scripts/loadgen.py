"""A light load generator: N concurrent HTTP clients on asyncio (uvloop), raw HTTP/1.1.

Each client holds one kept-alive connection and plays optimal-plan episodes of its own
(`episode_id` in the body), checking that every answer names its own episode (no cross
talk), and records each request's latency. Raw sockets rather than httpx because client and
server share this machine's two cores: the lighter the client, the more the numbers say
about the server.

    uv run python scripts/loadgen.py http://127.0.0.1:7860 --clients 64 --steps 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import dataclass, field


@dataclass
class LoadResult:
    clients: int
    requests: int = 0
    errors: int = 0
    crossed: int = 0  # answers that named another episode
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def summary(self) -> dict[str, float]:
        return {
            "clients": self.clients,
            "requests": self.requests,
            "errors": self.errors,
            "crossed": self.crossed,
            "rate": round(self.rate, 1),
            "p50_ms": round(self.percentile(0.50) * 1000, 2),
            "p99_ms": round(self.percentile(0.99) * 1000, 2),
            "mean_ms": round(statistics.fmean(self.latencies) * 1000, 2) if self.latencies else 0,
        }


def _request(path: str, body: dict) -> bytes:
    data = json.dumps(body).encode()
    return (
        f"POST {path} HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n"
        f"content-length: {len(data)}\r\n\r\n"
    ).encode() + data


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes):
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    return status, await reader.readexactly(length)


async def _client(
    host: str, port: int, index: int, plans: dict[str, list[dict]], steps: int, out: LoadResult
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    tasks = list(plans)
    episode = 0
    done = 0
    try:
        while done < steps:
            task = tasks[(index + episode) % len(tasks)]
            episode_id = f"load-{index}-{episode % 2}"  # reused: stays within the store's capacity
            calls = [("/reset/" + task, {"episode_id": episode_id})] + [
                ("/step/" + task, {**action, "episode_id": episode_id}) for action in plans[task]
            ]
            for path, body in calls:
                start = time.perf_counter()
                status, answer = await _exchange(reader, writer, _request(path, body))
                out.latencies.append(time.perf_counter() - start)
                out.requests += 1
                if status != 200:
                    out.errors += 1
                elif f'"episode_id":"{episode_id}"'.encode() not in answer:
                    out.crossed += 1
                if path.startswith("/step"):
                    done += 1
                    if done >= steps:
                        break
            episode += 1
    finally:
        writer.close()


async def run_load(url: str, clients: int, steps: int, plans: dict[str, list[dict]]) -> LoadResult:
    """`clients` concurrent clients, `steps` steps each (plus their resets)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    out = LoadResult(clients)
    start = time.perf_counter()
    await asyncio.gather(*(_client(host, int(port), i, plans, steps, out) for i in range(clients)))
    out.seconds = time.perf_counter() - start
    return out


def load(url: str, clients: int, steps: int, plans: dict[str, list[dict]]) -> LoadResult:
    try:
        import uvloop

        return uvloop.run(run_load(url, clients, steps, plans))
    except ImportError:  # pragma: no cover
        return asyncio.run(run_load(url, clients, steps, plans))


def main() -> int:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from dataclean_env.settings import Settings
    from dataclean_env.tasks.fixed import load_metadata

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    plans = {e["task_id"]: e["solution"] for e in load_metadata(Settings().datasets_dir)}
    print(json.dumps(load(args.url, args.clients, args.steps, plans).summary()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
