"""Runtime settings, read once from the environment (prefix `DCE_`), with documented defaults."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
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

    # ── the leaderboard (dataclean_env/leaderboard; README "Leaderboard") ──
    # The SQLite file (WAL mode) used unless DATABASE_URL names another database, e.g.
    # postgresql://user:password@host/db.
    leaderboard_db: Path = Field(default_factory=default_leaderboard_db)
    database_url: str = Field(default="", validation_alias="DATABASE_URL")
    # Seeds the secret split; unset, one is generated on first start and kept in the database.
    leaderboard_secret: SecretStr | None = None
    leaderboard_runs_per_hour: int = 10  # per client
    leaderboard_submissions_per_hour: int = 60  # per client (self-reported scores)
    leaderboard_default_episodes: int = 12  # per run, spread over its families
    leaderboard_max_episodes: int = 60  # per run
    leaderboard_open_runs: int = 32  # unfinished runs at once (each holds its tables)
    leaderboard_episode_seconds: float = 1800.0  # wall-clock limit of one episode


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
