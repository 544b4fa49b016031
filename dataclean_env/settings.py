"""Runtime settings, read once from the environment (prefix `DCE_`), with documented defaults."""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent


def bundled_datasets() -> Path:
    """The fixed tasks: `datasets/` of a checkout, else the copy the wheel ships."""
    checkout = PROJECT_ROOT / "datasets"
    return checkout if (checkout / "task_metadata.json").exists() else PACKAGE_DIR / "datasets"


def default_leaderboard_db() -> Path:
    """`var/leaderboard.sqlite3` of a checkout (the Docker image is one), else a per-user
    data folder: never the working directory, never site-packages."""
    if (PROJECT_ROOT / "pyproject.toml").exists():
        return PROJECT_ROOT / "var" / "leaderboard.sqlite3"
    return Path.home() / ".local" / "share" / "data-cleaning-openenv" / "leaderboard.sqlite3"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DCE_")

    # "local" (a trainer's own server: no per-client quota or creation rate) or "public"
    # (shared among strangers, as the Space image is: quotas and a rate per client, raised by
    # a submitter token). See dataclean_env/server/limits/client_limits.py.
    profile: Literal["local", "public"] = "local"
    # Loopback: a local `uv run server` is reachable from this machine only. The image
    # (Dockerfile's CMD) serves every address, as a container or a Space must.
    host: str = "127.0.0.1"
    port: int = 7860
    datasets_dir: Path = Field(default_factory=bundled_datasets)
    # More folders of custom datasets (each sub-folder with dirty.csv and clean.csv is a task),
    # separated like PATH. Read from EXTRA_DATASETS, the name the issue tracker documents.
    extra_datasets: str = Field(default="", validation_alias="EXTRA_DATASETS")
    # Episodes created by a reset are kept this long after their last use.
    episode_ttl_seconds: float = 3600.0
    # At most this many client-created episodes at once. When full, a reset evicts the least
    # recently used episode idle for DCE_EPISODE_IDLE_SECONDS; with none that idle it answers
    # 503 SERVER_FULL, Retry-After saying when the first one will be.
    max_episodes: int = 1024
    # An episode unused this long may be evicted to make room (never one used more recently).
    episode_idle_seconds: float = Field(default=300.0, gt=0)
    # At most this many of those episodes held for one client address, so one client cannot
    # take the pool; past it (after evicting its own idle ones) 503 CLIENT_QUOTA_REACHED.
    # Unset: none under the local profile, 64 under the public one; a submitter token's
    # holder gets DCE_EPISODES_PER_TOKEN (unset: the most any quota may be, a quarter of
    # DCE_MAX_EPISODES, which also bounds both).
    episodes_per_client: int | None = Field(default=None, ge=1)
    episodes_per_token: int | None = Field(default=None, ge=1)
    # At most this many OpenEnv WebSocket sessions (each its own episode) at once; a client
    # past it gets OpenEnv's CAPACITY_REACHED error frame and the socket is closed.
    max_sessions: int = 256
    # At most this many of those sessions (/ws and MCP) open at once from one client address,
    # so one client cannot take the pool; past it, CLIENT_QUOTA_REACHED. Unset: none under
    # the local profile, 32 under the public one; with a submitter token (Authorization:
    # Bearer), DCE_SESSIONS_PER_TOKEN (unset: a quarter of DCE_MAX_SESSIONS, the most any
    # quota may be).
    sessions_per_client: int | None = Field(default=None, ge=1)
    sessions_per_token: int | None = Field(default=None, ge=1)
    # Request bodies (every HTTP route) and WebSocket frames above this many bytes are refused
    # with 413 (an error frame on /ws).
    max_body_bytes: int = 1_000_000
    # When OpenEnv's /ws, /schema, /metadata, /mcp are mounted: "background" (right after
    # start-up, so /health answers in about the time pandas takes to import), "lazy" (on the
    # first request that needs them) or "eager" (before start-up completes).
    openenv_mount: Literal["background", "lazy", "eager"] = "background"
    # Server processes for `server` (see server/processes/workers.py): N > 1 runs N processes behind
    # HAProxy (which must be on PATH), each holding its own episodes; HAProxy sends every
    # call to the process that is its episode's home (server/processes/affinity.py).
    workers: int = Field(default=1, ge=1, le=64)
    # This process's place among the processes that share the episodes (set by the
    # supervisor of `--workers`, or by hand for replicas on several machines, see deploy/):
    # its index and their number. A call for an episode whose home is another process is
    # answered 421 MISDIRECTED, so no episode id can live on two processes.
    process_index: int = Field(default=0, ge=0)
    processes: int = Field(default=1, ge=1, le=64)
    # Where the processes count their rate limits and caps together: a SQLite file (the
    # supervisor of `--workers` sets one) or a PostgreSQL URL, postgresql://user:pw@host/db
    # (replicas on several machines). Empty: this process's memory, each cap divided by
    # DCE_PROCESSES. Touched only by the calls a limit counts (resets, session and socket
    # opens and closes, leaderboard runs and submissions), never by a step.
    limits_db: str = ""
    # One JSON line per request (and per /ws step) on stderr: episode, operation, status, ms.
    log_json: bool = False
    # uvicorn's access log line per request (one process; `--workers` never writes it): a
    # logging call and a write per request, ~5% of a small step's time in the server.
    access_log: bool = True
    # The server's step memory: steps one episode took, reused when another episode of the
    # task takes them again (`dataclean_env/engine/step_memory.py`); off: every step is computed.
    # Same bytes either way.
    step_memory: bool = True
    # permessage-deflate on /ws when the client offers it. Off: compressing a 4 KB
    # observation frame costs the server ~50 µs of CPU (and the client ~30 µs to inflate)
    # to save ~2.5 KB on the wire; the server's CPU is what many sessions share.
    ws_compression: bool = False

    # ── hardening limits (docs/DESIGN.md, "Limits") ──
    # Engine time of one step, a whole program included; past it the step is refused (422
    # STEP_TIME_LIMIT) and changes nothing.
    step_seconds: float = 2.0
    # Longest text a step may write into a cell, and most text (characters over all cells) a
    # step may leave in a table (a task's own data may exceed both; a step may not grow it).
    max_cell_chars: int = 1_000
    max_table_chars: int = 500_000
    # An action's parameters, as JSON, at most this many bytes (they stay in the history),
    # and the parameters of all of an episode's steps together at most this many.
    max_action_bytes: int = 262_144
    max_history_bytes: int = 1_048_576
    # Per client address: resets and session creations (REST reset, /mcp session create, /ws
    # connect) refill at this rate up to this burst; past it, 429 RATE_LIMITED + Retry-After.
    # Unset: no limit under the local profile, 2 per second and 128 under the public one.
    creation_rate_per_second: float | None = Field(default=None, ge=0)
    creation_burst: int | None = Field(default=None, ge=1)
    # /ws: a connection with no frame from the client for this long is closed (code 1001).
    ws_idle_seconds: float = 900.0
    # /ws: the server pings every this many seconds and drops a client that does not answer
    # within the same time (uvicorn's protocol pings; OpenEnv's client pings too).
    ws_ping_seconds: float = 20.0
    # Sessions made by `POST /mcp {"method": "openenv/session/create"}` that no socket is
    # attached to expire after this long without use.
    detached_session_seconds: float = 60.0
    # A connection must finish sending its request headers within this time, and its body
    # within `body_seconds` (slow-client protection), else it is closed / answered 408.
    header_seconds: float = 10.0
    body_seconds: float = 30.0
    # Idle keep-alive connections are closed after this long.
    keep_alive_seconds: int = 5
    # Browser origins allowed to call the API (comma separated; "*" for any). The server's
    # own origin is always allowed. Other origins get 403 on every state-changing request.
    cors_origins: str = ""
    # Host names the server answers for (comma separated; empty: any). A name not listed gets
    # 400 HOST_NOT_ALLOWED, so a page whose own name was re-pointed at this server (DNS
    # rebinding) cannot use it; loopback names are always allowed (the image's health check).
    allowed_hosts: str = ""
    # The proxies whose X-Forwarded-For is trusted for the client address (uvicorn's
    # forwarded_allow_ips): addresses and networks, comma separated, never "*". The client
    # is the rightmost X-Forwarded-For entry not added by one of them (docs/deployment.md).
    # None by default, not even 127.0.0.1 (uvicorn's default): any local process could
    # otherwise pass for any client and dodge every per-client limit.
    forwarded_allow_ips: str = ""
    # ── the leaderboard (dataclean_env/leaderboard; README "Leaderboard") ──
    # The SQLite file (WAL mode) used unless DATABASE_URL names another database, e.g.
    # postgresql://user:password@host/db.
    leaderboard_db: Path = Field(default_factory=default_leaderboard_db)
    database_url: str = Field(default="", validation_alias="DATABASE_URL")
    # Seeds the secret split; unset, one is generated on first start and kept in the database.
    leaderboard_secret: SecretStr | None = None
    leaderboard_runs_per_hour: int = 10  # per client
    leaderboard_submissions_per_hour: int = 60  # per client (self-reported scores)
    leaderboard_default_episodes: int = 12  # per practice run, spread over its families
    leaderboard_max_episodes: int = 60  # per practice run (a suite run plays its suite)
    leaderboard_open_runs: int = 32  # unfinished runs under tokens at once (each holds tables)
    # Unfinished anonymous runs at once: a pool of their own, so they cannot fill the places
    # of the token holders' runs.
    leaderboard_open_anonymous_runs: int = Field(default=8, ge=0)
    # A run none of whose episodes was joined this long after its creation expires (no
    # one learned anything from it: it is not counted), so unplayed runs hold no place.
    leaderboard_unplayed_run_seconds: float = Field(default=300.0, gt=0)
    # Unfinished runs one client may hold at once, so no client can fill the server's cap.
    leaderboard_open_runs_per_client: int = Field(default=2, ge=1)
    # Wall-clock limit of one episode, from when it is first joined.
    leaderboard_episode_seconds: float = 1800.0
    # Wall-clock limit of a whole run: its episodes not ended by then time out.
    leaderboard_run_seconds: float = Field(default=86400.0, gt=0)
    # Refuse runs without a submitter token (401 TOKEN_REQUIRED); recommended for a public
    # server (a Space): every ranked name is then one an administrator issued.
    leaderboard_require_token: bool = False

    @model_validator(mode="after")
    def _index_in_range(self) -> Settings:
        if self.process_index >= self.processes:
            raise ValueError(
                f"DCE_PROCESS_INDEX ({self.process_index}) must be below DCE_PROCESSES "
                f"({self.processes})"
            )
        return self

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _proxies_by_address(cls, value: str) -> str:
        return trusted_proxies(value)


def trusted_proxies(value: str) -> str:
    """`value` if every comma-separated entry is an IP address or network, else ValueError.

    "*" would let any client write its own address (uvicorn then takes the leftmost,
    client-written entry), and uvicorn silently treats a misspelt address as a name that
    never matches, so both are refused here, where the setting is read.
    """
    for entry in (part.strip() for part in value.split(",")):
        if not entry:
            continue
        try:
            ipaddress.ip_network(entry)  # strict, as uvicorn reads it
        except ValueError:
            raise ValueError(
                f"DCE_FORWARDED_ALLOW_IPS: {entry!r} is not an IP address or network; name "
                "the proxies in front of the server by address (never '*')"
            ) from None
    return value


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
