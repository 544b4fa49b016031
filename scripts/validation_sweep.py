"""The validation sweep: degenerate policies (do nothing, drop all rows, mode overwrite,
blanket SQL updates, report every cell, cast every column, random) over seeds of every
suite family never score above doing nothing, and the reference plan scores the maximum.
Writes dataclean_env/benchmark/suites/validation.json and the table in docs/benchmark.md;
exit status 1 on any violation.

    uv run python scripts/validation_sweep.py                 # seeds 0-9 of every family
    uv run python scripts/validation_sweep.py --seeds 0-49    # more
    uv run python scripts/validation_sweep.py --check         # exit 1 when the table is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dataclean_env.benchmark.validation_report import main

if __name__ == "__main__":
    sys.exit(main())
