"""Runtime settings, read once from the environment (prefix `DCE_`), with documented defaults."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent


def bundled_datasets() -> Path:
    """The fixed tasks: `datasets/` of a checkout, else the copy the wheel ships."""
    checkout = PROJECT_ROOT / "datasets"
    return checkout if (checkout / "task_metadata.json").exists() else PACKAGE_DIR / "datasets"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DCE_")

    host: str = "0.0.0.0"
    port: int = 7860
    datasets_dir: Path = Field(default_factory=bundled_datasets)
    # More folders of custom datasets (each sub-folder with dirty.csv and clean.csv is a task),
    # separated like PATH. Read from EXTRA_DATASETS, the name the issue tracker documents.
    extra_datasets: str = Field(default="", validation_alias="EXTRA_DATASETS")
    # Episodes created by a reset are kept this long after their last use.
    episode_ttl_seconds: float = 3600.0
    # At most this many client-created episodes at once; past it, reset answers 503.
    max_episodes: int = 1024
    # At most this many OpenEnv WebSocket sessions (each its own episode) at once; a client
    # past it gets OpenEnv's CAPACITY_REACHED error frame and the socket is closed.
    max_sessions: int = 256
    # Request bodies above this many bytes are refused with 413.
    max_body_bytes: int = 1_000_000
    # When OpenEnv's /ws, /schema, /metadata, /mcp are mounted: "background" (right after
    # start-up, so /health answers in about the time pandas takes to import), "lazy" (on the
    # first request that needs them) or "eager" (before start-up completes).
    openenv_mount: Literal["background", "lazy", "eager"] = "background"
    # Worker processes for `server` (see server/workers.py); each holds its own episodes and
    # an affinity front sends every call to the one that holds the episode it names.
    workers: int = Field(default=1, ge=1, le=64)
    # One JSON line per request (and per /ws step) on stderr: episode, operation, status, ms.
    log_json: bool = False


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
