"""Per-client limits by deployment profile (`DCE_PROFILE`).

`local`, the default (`uv run server`, the in-process and TRL paths), is a trainer's own
server: one host may take the whole pool, since a GRPO batch opens a session per rollout, so
no per-client quota and no creation rate apply. `public` (the Space image sets it) shares the
server among strangers: each address gets a quota of sessions and of REST episodes and a
creation rate, and a submitter token (`dataclean-env-admin token create`) raises the quotas.

A setting given explicitly applies in either profile. Whatever is asked, a quota never exceeds
a quarter of the cap it divides (`DCE_MAX_SESSIONS`, `DCE_MAX_EPISODES`), so that no one
client takes every place (docs/training.md, "Sessions and limits").
"""

from __future__ import annotations

from dataclasses import dataclass

from dataclean_env.settings import Settings

# The public profile's defaults. The session quota is at least what the docs' own training
# recipes open from one host (tests/unit/test_client_limits.py checks the recipes against it).
PUBLIC_SESSIONS_PER_CLIENT = 32
PUBLIC_EPISODES_PER_CLIENT = 64
PUBLIC_CREATION_BURST = 128
PUBLIC_CREATION_RATE_PER_SECOND = 2.0
# A quota is at most this fraction of its cap; a token's quota is that much unless set.
CAP_SHARE = 4


@dataclass(frozen=True)
class Quota:
    """How many places of a cap one client may hold: an address, and a token's holder
    (None: no quota)."""

    per_client: int | None
    per_token: int | None

    def of(self, token_holder: bool) -> int | None:
        return self.per_token if token_holder else self.per_client


def largest_quota(cap: int) -> int:
    return max(1, cap // CAP_SHARE)


def _quota(cap: int, per_client: int | None, per_token: int | None, public: int, on: bool) -> Quota:
    if per_client is None and on:
        per_client = public
    if per_client is None:
        return Quota(None, None)
    ceiling = largest_quota(cap)
    client = min(per_client, ceiling)
    token = min(per_token, ceiling) if per_token is not None else ceiling
    return Quota(client, max(client, token))  # a token never lowers a quota


def session_quota(settings: Settings) -> Quota:
    """Open `/ws` and MCP sessions per client, within DCE_MAX_SESSIONS."""
    return _quota(
        settings.max_sessions,
        settings.sessions_per_client,
        settings.sessions_per_token,
        PUBLIC_SESSIONS_PER_CLIENT,
        settings.profile == "public",
    )


def episode_quota(settings: Settings) -> Quota:
    """REST episodes held per client, within DCE_MAX_EPISODES."""
    return _quota(
        settings.max_episodes,
        settings.episodes_per_client,
        settings.episodes_per_token,
        PUBLIC_EPISODES_PER_CLIENT,
        settings.profile == "public",
    )


def creation_rate(settings: Settings) -> tuple[int, float] | None:
    """(burst, refill per second) of each client's resets and session creations; None: no
    limit. Either setting given turns the limit on, the other at the public default."""
    burst, rate = settings.creation_burst, settings.creation_rate_per_second
    if burst is None and rate is None and settings.profile != "public":
        return None
    return (
        PUBLIC_CREATION_BURST if burst is None else burst,
        PUBLIC_CREATION_RATE_PER_SECOND if rate is None else rate,
    )
