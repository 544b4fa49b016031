"""Fuzz the HTTP API with schemathesis against a real uvicorn on 127.0.0.1.

Checks: all of schemathesis' (`--checks all`): no 5xx, every status documented, every
response body and header as documented, content types as documented, schema-valid requests
accepted and schema-invalid ones refused, unsupported methods refused, and the rest. Generation
is deterministic (`--generation-deterministic`, a fixed seed), so a verdict does not change
from one run to the next. The short run is part of the tests (tests/e2e/test_fuzz_api.py);
the long one writes its result to docs/FUZZ.md:

    uv run python scripts/fuzz_api.py --examples 120 --write docs/FUZZ.md
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dataclean_env.settings import Settings  # noqa: E402
from tests.web import LiveServer  # noqa: E402

CHECKS = "all"  # schemathesis' "all" has no response-time limit: no verdict on speed
# The fuzzer resets thousands of episodes and starts runs from one address: lift the
# per-client creation rate and the per-client share of open runs (to the server's own cap)
# so it exercises the routes rather than those limits, which their own tests cover (429
# stays documented; a 503 is what schemathesis counts as a server error).
# OpenEnv's routes mounted before serving: the document waits for them (seconds on a busy
# machine), longer than schemathesis waits for it.
FUZZ_SETTINGS = Settings(
    openenv_mount="eager",
    creation_burst=1_000_000,
    creation_rate_per_second=10_000.0,
    leaderboard_open_runs_per_client=32,
    # the fuzzer opens many anonymous runs: past the pool a 503 is the right answer, not a
    # finding
    leaderboard_open_anonymous_runs=100_000,
)


def run(examples: int, seed: int, workers: int = 1) -> tuple[int, str, float]:
    """(exit status, schemathesis' output, seconds) of one run against a fresh server."""
    server = LiveServer(FUZZ_SETTINGS).start()
    started = time.monotonic()
    try:
        completed = subprocess.run(
            [
                str(Path(sys.executable).parent / "schemathesis"),
                "--config-file",
                str(ROOT / "scripts" / "schemathesis.toml"),
                "run",
                f"{server.url}/openapi.json",
                "--checks",
                CHECKS,
                "--max-examples",
                str(examples),
                "--seed",
                str(seed),
                "--workers",
                str(workers),
                "--request-timeout",
                "30",
                "--generation-deterministic",  # implies no example database
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=3600,
            cwd=ROOT,
        )
    finally:
        server.close()
    return completed.returncode, completed.stdout + completed.stderr, time.monotonic() - started


def case_count(output: str) -> int:
    """How many requests (test cases) schemathesis reports it sent."""
    found = re.search(r"(\d+) generated", output)
    return int(found.group(1)) if found else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=120, help="test cases per operation")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--write", type=Path, help="write the result (markdown) here")
    args = parser.parse_args()
    status, output, seconds = run(args.examples, args.seed)
    summary = output[output.rfind("=== SUMMARY") - 30 :] if "SUMMARY" in output else output[-3000:]
    print(output)
    if args.write:
        args.write.write_text(
            "# API fuzzing (schemathesis)\n\n"
            f"`uv run python scripts/fuzz_api.py --examples {args.examples} --seed {args.seed}`"
            f" against a real uvicorn on 127.0.0.1: {case_count(output)} test cases in "
            f"{seconds:.0f} s, exit status {status} ({'pass' if status == 0 else 'FAIL'}).\n\n"
            f"Checks: `{CHECKS}`, with the exceptions in "
            f"scripts/schemathesis.toml.\n\n```\n{summary.strip()}\n```\n",
            encoding="utf-8",
        )
    sys.exit(status)


if __name__ == "__main__":
    main()
