"""`dataclean-env-admin`: the leaderboard's administration commands.

dataclean-env-admin audit [--run RUN_ID] [--rescore]   # see dataclean_env.leaderboard.audit
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from dataclean_env.leaderboard import audit


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dataclean-env-admin", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("audit", help="verify (or --rescore) the stored leaderboard records")
    args, rest = parser.parse_known_args(argv)
    if args.command == "audit":
        return audit.main(rest)
    return 2  # pragma: no cover - argparse refuses other commands


if __name__ == "__main__":
    raise SystemExit(main())
