"""Baseline report: no-op, heuristic, random and oracle agents (and the LLM agent when
HF_TOKEN or OPENAI_API_KEY is set) on the eval split; writes docs/BASELINES.md and
docs/baselines.png.

    uv run python scripts/baselines.py                    # seeds 0-99 of every task
    uv run python scripts/baselines.py --seeds 0-2 --out-dir /tmp/report
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dataclean_env.runner.baselines import main

if __name__ == "__main__":
    sys.exit(main())
