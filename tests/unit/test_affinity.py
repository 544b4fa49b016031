"""The routing rule of `server --workers N` (and of deploy/haproxy.cfg): which process a
call belongs to."""

from __future__ import annotations

import zlib

from dataclean_env.doors import new_episode_id
from dataclean_env.server.affinity import (
    DEFAULT_KEY,
    episode_id_of,
    routing_key,
    worker_for,
)


def test_the_episode_id_is_read_with_the_routes_precedence_body_query_header() -> None:
    headers = {b"x-episode-id": b"from-header"}
    body = b'{"episode_id": "from-body", "operation": "finish"}'
    assert episode_id_of(b"episode_id=from-query", headers, body) == "from-body"
    assert episode_id_of(b"episode_id=from-query", headers, b'{"operation": "x"}') == "from-query"
    assert episode_id_of(b"other=1", headers, b"") == "from-header"
    assert episode_id_of(b"a=1&episode_id=q%2D1", {}, b"") == "q-1"
    assert episode_id_of(b"", {}, b"") is None


def test_bodies_that_are_not_json_objects_name_no_episode() -> None:
    assert episode_id_of(b"", {}, b"not json episode_id") is None
    assert episode_id_of(b"", {}, b'["episode_id"]') is None
    assert episode_id_of(b"", {}, b'{"episode_id": 5}') is None


def test_calls_without_id_and_default_episode_ids_go_to_the_first_worker() -> None:
    assert routing_key(None) == DEFAULT_KEY
    assert routing_key("easy_dedup_rename-0123456789ab") == DEFAULT_KEY
    assert routing_key(new_episode_id()) == DEFAULT_KEY  # server-issued (default episodes)
    assert routing_key("lb-" + "0123456789abcdef" * 2) == DEFAULT_KEY  # the leaderboard's
    assert worker_for(DEFAULT_KEY, 4) == 0


def test_client_ids_and_uuids_are_hashed_stably() -> None:
    uuid = "123e4567-e89b-12d3-a456-426614174000"  # ends like a default id, but has 4 '-'
    for episode_id in ("run-7", uuid, "ws-abc", "easy-0123456789AB"):
        assert routing_key(episode_id) == episode_id
        assert worker_for(episode_id, 3) == zlib.crc32(episode_id.encode()) % 3
        assert worker_for(episode_id, 3) == worker_for(episode_id, 3)


def test_many_ids_spread_over_every_worker() -> None:
    counts = [0, 0, 0]
    for i in range(300):
        counts[worker_for(routing_key(f"client-{i}"), 3)] += 1
    assert min(counts) > 60, counts
