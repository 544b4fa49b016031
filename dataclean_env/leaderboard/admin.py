"""`dataclean-env-admin`: the leaderboard's administration commands.

dataclean-env-admin audit [--run RUN_ID] [--rescore]   # see dataclean_env.leaderboard.audit
dataclean-env-admin token create NAME --model MODEL    # prints the token once
dataclean-env-admin token list
dataclean-env-admin token rotate ID                    # a new secret; its runs stay its own
dataclean-env-admin token revoke ID|NAME                # and withdraws its runs
dataclean-env-admin run withdraw RUN_ID --why TEXT     # takes one run off the board

They read the server's settings (DCE_LEADERBOARD_DB or DATABASE_URL).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from sqlalchemy import Engine

from dataclean_env.errors import InvalidName
from dataclean_env.leaderboard import audit, db, tokens
from dataclean_env.leaderboard.names import MODEL_LENGTH, NAME_LENGTH, board_name
from dataclean_env.leaderboard.withdraw import withdraw_run
from dataclean_env.settings import get_settings


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dataclean-env-admin", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("audit", help="verify (or --rescore) the stored leaderboard records")
    token = commands.add_parser("token", help="submitter tokens").add_subparsers(
        dest="action", required=True
    )
    create = token.add_parser("create", help="a new token bound to NAME and one model")
    create.add_argument("name")
    create.add_argument("--model", required=True, help="the model its runs play (one row)")
    token.add_parser("list", help="every token: id, name, model, created, revoked")
    token.add_parser("rotate", help="a new secret for a token, by id").add_argument("token_id")
    token.add_parser("revoke", help="a token by id, or every token of a name").add_argument("which")
    run = commands.add_parser("run", help="leaderboard runs").add_subparsers(
        dest="action", required=True
    )
    withdrawn = run.add_parser("withdraw", help="take one run off the board (kept, audited)")
    withdrawn.add_argument("run_id")
    withdrawn.add_argument("--why", required=True, help="the reason, kept in the audit trail")
    args, rest = parser.parse_known_args(argv)
    if args.command == "audit":
        return audit.main(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    return _run(args) if args.command == "run" else _token(args)


def _engine() -> Engine:
    settings = get_settings()
    engine = db.connect(db.database_url(settings.database_url, settings.leaderboard_db))
    db.migrate(engine)
    return engine


def _run(args: argparse.Namespace) -> int:
    if not args.why.strip():
        raise SystemExit("--why: say why the run is withdrawn (it is kept in the audit trail)")
    engine = _engine()
    try:
        if not withdraw_run(engine, args.run_id, args.why.strip()):
            raise SystemExit(f"no run {args.run_id!r} to withdraw (unknown, or withdrawn)")
    finally:
        engine.dispose()
    print(f"withdrew {args.run_id}")
    return 0


def _token(args: argparse.Namespace) -> int:
    engine = _engine()
    try:
        if args.action == "create":
            try:
                name = board_name(args.name, "name", NAME_LENGTH)
                model = board_name(args.model, "model", MODEL_LENGTH)
                token_id, token = tokens.create(engine, name, model)
            except (InvalidName, tokens.TokenTaken) as error:
                raise SystemExit(f"cannot create a token: {error}") from None
            print(f"{token_id} {name} {model}\n{token}\n(shown once: only its sha256 is stored)")
        elif args.action == "list":
            for token_id, name, bound, created, revoked in tokens.listed(engine):
                state = f"revoked {revoked:%Y-%m-%d %H:%M}" if revoked else "active"
                print(f"{token_id}\t{name}\t{bound}\tcreated {created:%Y-%m-%d %H:%M}\t{state}")
        elif args.action == "rotate":
            fresh = tokens.rotate(engine, args.token_id)
            if fresh is None:
                raise SystemExit(f"no active token {args.token_id!r}")
            print(f"{args.token_id}\n{fresh}\n(shown once; the old secret no longer works)")
        else:
            ended = tokens.revoke(engine, args.which)
            print(f"revoked {len(ended)} token(s); their runs are withdrawn")
            return 0 if ended else 1
    finally:
        engine.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
