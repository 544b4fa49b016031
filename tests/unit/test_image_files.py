"""What `COPY . .` puts in the image: the checkout minus .dockerignore, never runtime state."""

from __future__ import annotations

import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RUNTIME_STATE = [
    "var/leaderboard.sqlite3",
    "var/leaderboard.sqlite3-wal",
    "dist/data_cleaning_openenv-0.3.0-py3-none-any.whl",
    ".env",
    ".venv/bin/python",
    "dataclean_env/engine/__pycache__/episode.cpython-311.pyc",
    ".pytest_cache/v/cache/lastfailed",
    "board.db",
]


def ignore_patterns() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule for these patterns: a pattern matches the path or one of its parents;
    `**/` matches any depth."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pattern in patterns:
        bare = pattern.removeprefix("**/")
        for prefix in prefixes:
            if fnmatch.fnmatch(prefix, pattern) or (
                bare != pattern and fnmatch.fnmatch(prefix.split("/")[-1], bare)
            ):
                return True
    return False


def image_files(candidates: list[str]) -> list[str]:
    assert "COPY --chown=app:app . ." in (ROOT / "Dockerfile").read_text(encoding="utf-8")
    patterns = ignore_patterns()
    return [path for path in candidates if not ignored(path, patterns)]


def test_no_runtime_state_or_secret_reaches_the_image() -> None:
    assert image_files(RUNTIME_STATE) == []


def test_the_source_still_does() -> None:
    source = ["dataclean_env/server/app.py", "static/index.html", "pyproject.toml", "uv.lock"]
    assert image_files(source) == source


def test_nothing_in_the_checkout_that_is_state_would_be_copied() -> None:
    here = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.sqlite3*")]
    assert image_files(here) == []
