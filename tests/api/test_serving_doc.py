"""docs/deployment.md states the wire limits `server/processes/serving.py` enforces."""

from __future__ import annotations

from pathlib import Path

from dataclean_env.server.processes.serving import MAX_HEADER_BYTES

ROOT = Path(__file__).resolve().parents[2]


def test_the_header_limit_in_the_deployment_doc_is_the_protocol_s() -> None:
    doc = " ".join((ROOT / "docs" / "deployment.md").read_text(encoding="utf-8").split())
    assert f"request headers bounded at {MAX_HEADER_BYTES // 1024} KiB" in doc
