"""Episode ids: which a client may choose, which the server issues, which the leaderboard
holds. Every door checks an id here before it starts or finds an episode."""

from __future__ import annotations

import re
import secrets
from typing import Any

from dataclean_env.errors import InvalidAction
from dataclean_env.schemas import MAX_EPISODE_ID

EPISODE_ID_CHARS = rf"[A-Za-z0-9._:-]{{1,{MAX_EPISODE_ID}}}"
_EPISODE_ID = re.compile(EPISODE_ID_CHARS)  # fullmatch: "$" would allow a "\n"
SERVER_PREFIX = "dce:"  # server-issued ids only (clients may not start theirs with it)
# The leaderboard's episodes (issued by POST /leaderboard/runs): an id with this prefix is
# joined while its run holds it and is never created by a reset, so a lost one is a 404,
# not a fresh practice episode under a leaderboard name.
LEADERBOARD_PREFIX = "lb-"


def check_episode_id(episode_id: Any) -> str:
    if not isinstance(episode_id, str) or not _EPISODE_ID.fullmatch(episode_id):
        raise InvalidAction(
            f"episode_id must be 1 to {MAX_EPISODE_ID} characters of letters, digits, '.', '_', "
            "':' or '-'"
        )
    return episode_id


def check_client_id(episode_id: Any) -> str:
    """A client-chosen id: well-formed and not in the server's namespace (a server-issued
    id can never be reset by a client, so it cannot be taken over)."""
    if check_episode_id(episode_id).startswith(SERVER_PREFIX):
        raise InvalidAction(
            f"ids starting with {SERVER_PREFIX!r} are issued by the server and cannot be "
            "reset; reset without an id (or with an id of your own) to start a new episode"
        )
    return str(episode_id)


def new_episode_id() -> str:
    """A server-issued id: 128 random bits, so nobody can guess or take it over."""
    return SERVER_PREFIX + secrets.token_urlsafe(16)
