"""Which process (or replica) an HTTP call belongs to: one rule for the front proxy of
`server --workers N` and for the HAProxy configuration of several replicas.

An episode lives in the one process that created it, so every call that names an episode
must reach that process. The routing key is the episode id a call carries (JSON body field
`episode_id`, else the `episode_id` query parameter, else the `X-Episode-Id` header: the
precedence the routes apply). Calls without an id use a task's default episode, and default
episodes all live on the first process, so they get the key `DEFAULT_KEY`; so do the ids the
server issues there (default episodes' `dce:...`, see `episode_store`; the leaderboard's
`lb-...`), which a client sends back. Any other id is hashed: the same id always reaches the same process.
/ws sessions need no key: a WebSocket connection stays on the process it was opened on.
"""

from __future__ import annotations

import json
import re
import zlib
from urllib.parse import parse_qs

DEFAULT_KEY = ""
# Ids made by the process that serves calls without an id (the first), so they live there:
# the server-issued ids of default episodes (`dce:` + 22 url-safe characters, see
# `doors.new_episode_id`), the leaderboard's issued episodes (`lb-` + 32 hex digits, made by
# POST /leaderboard/runs, which names no episode), and the earlier default-id form (a task
# id without '-', then '-' and 12 hex digits; a UUID, with its four '-', does not match).
DEFAULT_EPISODE_ID = re.compile(
    r"dce:[A-Za-z0-9_-]{22}|lb-[0-9a-f]{32}|[A-Za-z0-9_.]+-[0-9a-f]{12}"
)
HEADER = b"x-episode-id"


def episode_id_of(query: bytes, headers: dict[bytes, bytes], body: bytes) -> str | None:
    """The episode id a call names, with the routes' precedence: body, query, header."""
    if body and b"episode_id" in body:
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("episode_id"), str):
            episode_id: str = data["episode_id"]
            return episode_id
    if query and b"episode_id" in query:
        values = parse_qs(query.decode("latin-1")).get("episode_id")
        if values:
            return values[0]
    header = headers.get(HEADER)
    return header.decode("latin-1") if header is not None else None


def routing_key(episode_id: str | None) -> str:
    if episode_id is None or DEFAULT_EPISODE_ID.fullmatch(episode_id):
        return DEFAULT_KEY
    return episode_id


def worker_for(key: str, workers: int) -> int:
    """The worker index of a routing key: 0 for default episodes, else a stable hash."""
    if key == DEFAULT_KEY:
        return 0
    return zlib.crc32(key.encode("utf-8")) % workers
