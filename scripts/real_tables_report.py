"""The literature's protocol on the real tables, one command:

    uv run python scripts/real_tables_report.py      # writes docs/real_tables.json and the docs
    uv run python scripts/real_tables_report.py --keep-reference   # new Raha+Baran runs only

Plays the reference agent on rayyan and every corpus table at 0 and 20 labels over seeds
0-4, replays Raha+Baran's recorded runs (docs/raha_baran.json and docs/raha_baran/*.json,
written by `integrations/raha/raha_baran.py --actions --out ...` in its venv), and writes
the results and their section of docs/real-tables.md and docs/BASELINES.md
(`dataclean_env/runner/protocol_report.py` says how each figure is measured).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dataclean_env.runner import protocol_report  # noqa: E402
from dataclean_env.tasks import default_registry  # noqa: E402

RESULTS = ROOT / "docs" / "real_tables.json"
PAGES = (ROOT / "docs" / "real-tables.md", ROOT / "docs" / "BASELINES.md")
RAHA = [ROOT / "docs" / "raha_baran.json", *sorted((ROOT / "docs" / "raha_baran").glob("*.json"))]


def tables(registry_ids: list[str]) -> list[str]:
    """rayyan and every corpus table (their unlabelled ids)."""
    return ["rayyan", *sorted(t for t in registry_ids if t.startswith("corpus_") and "-" not in t)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 (default 5)")
    p.add_argument(
        "--keep-reference",
        action="store_true",
        help="keep the reference agent's stored runs, measure Raha+Baran's again",
    )
    args = p.parse_args(argv)
    registry = default_registry()
    raha = protocol_report.recorded_runs(path for path in RAHA if path.is_file())
    kept = protocol_report.load(RESULTS) if args.keep_reference else None
    seeds = list(range(args.seeds))
    if kept is not None and kept["seeds"] != seeds:
        raise SystemExit(f"the stored runs are of seeds {kept['seeds']}, not {seeds}")
    results = protocol_report.measure(registry, tables(registry.task_ids()), seeds, raha, kept)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    section = protocol_report.markdown(results)
    for page in PAGES:
        page.write_text(protocol_report.splice(page.read_text("utf-8"), section), "utf-8")
    print("\n".join(section))
    return 0


if __name__ == "__main__":
    sys.exit(main())
