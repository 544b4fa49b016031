"""A small dirty/clean pair published by a stand-in "upstream" (a local folder reached by a
file:// address) and a manifest naming it, for `dataclean-env-datasets` (tasks/fetch.py):
the fetch is tested without opening or fetching any literature table."""

from __future__ import annotations

import json
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"
DIRTY = b"id,city,state\n1,Bostn,MA\n2,Chicago,IL\n3,Austin,tx\n"
CLEAN = b"id,city,state\n1,Boston,MA\n2,Chicago,IL\n3,Austin,TX\n"


def upstream_manifest(tmp_path: Path, url: str | None = None, commit: str = COMMIT) -> Path:
    """The pair under tmp_path/upstream/COMMIT/, and a manifest naming it as table `cities`
    pinned at `commit`, served from `url` (default: that folder)."""
    upstream = tmp_path / "upstream" / COMMIT
    upstream.mkdir(parents=True)
    (upstream / "dirty.csv").write_bytes(DIRTY)
    (upstream / "clean.csv").write_bytes(CLEAN)
    manifest = tmp_path / "manifest.json"
    entry = {
        "repository": "example/cities",
        "commit": commit,
        "url": url or (tmp_path / "upstream").as_uri() + "/{commit}/{file}",
        "pinned": "made by the test",
        "task": {"key": "id", "max_steps": 5},
    }
    manifest.write_text(json.dumps({"tables": {"cities": entry}}), encoding="utf-8")
    return manifest
