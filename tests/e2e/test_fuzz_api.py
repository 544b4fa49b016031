"""The OpenAPI document and the server agree. A short schemathesis run against a real uvicorn
with every check (`--checks all` but a response-time limit; the exceptions JSON Schema cannot
state in scripts/schemathesis.toml), deterministic generation on a fixed seed: no 5xx, every
status, body, header and content type as documented, schema-valid requests accepted and
invalid ones refused. The long run (scripts/fuzz_api.py) has its last result in
docs/FUZZ.md."""

from __future__ import annotations

from scripts.fuzz_api import case_count, run


def test_schemathesis_finds_nothing() -> None:
    status, output, _ = run(examples=12, seed=3)
    assert status == 0, output[-6000:]
    assert case_count(output) >= 200, output[-2000:]
