"""`dataclean-env-admin`: the leaderboard's administration commands.

dataclean-env-admin audit [--run RUN_ID] [--rescore]   # see dataclean_env.leaderboard.audit
dataclean-env-admin token create NAME --model MODEL    # prints the token once
dataclean-env-admin token list
dataclean-env-admin token rotate ID                    # a new secret; its runs stay its own
dataclean-env-admin token revoke ID|NAME

They read the server's settings (DCE_LEADERBOARD_DB or DATABASE_URL).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from dataclean_env.errors import InvalidName
from dataclean_env.leaderboard import audit, db, tokens
from dataclean_env.leaderboard.names import MODEL_LENGTH, NAME_LENGTH, board_name
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
    args, rest = parser.parse_known_args(argv)
    if args.command == "audit":
        return audit.main(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    return _token(args)


def _token(args: argparse.Namespace) -> int:
    settings = get_settings()
    engine = db.connect(db.database_url(settings.database_url, settings.leaderboard_db))
    try:
        db.migrate(engine)
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
            print(f"revoked {len(ended)} token(s)")
            return 0 if ended else 1
    finally:
        engine.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
