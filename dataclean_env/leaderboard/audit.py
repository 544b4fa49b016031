"""Audit the leaderboard: re-create stored instances from the secret, replay their traces.

    dataclean-env-admin audit                      # verify every record
    dataclean-env-admin audit --run RUN_ID         # one run
    dataclean-env-admin audit --version VERSION    # the records of one suite version
    dataclean-env-admin audit --rescore            # score every ended episode under this
                                                   # code's grader (a new suite version)

It reads the same settings as the server (DCE_LEADERBOARD_DB or DATABASE_URL, and
DCE_LEADERBOARD_SECRET or the secret stored in the database). Verification replays each
record made under this code's grader version and checks the instance hash, that every
action is accepted again, and that the score, the components and the normalised score are
exactly those stored; records of other grader versions are counted, not judged.
`--rescore` appends, for each ended episode without one, a record under this grader version
(same trace, new score, normalised again), which builds that suite version's board. Exit status: 0 when every judged record matches.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from sqlalchemy import Engine, insert, select

from dataclean_env.benchmark.normalised import anchors
from dataclean_env.benchmark.suite import secret_instance
from dataclean_env.benchmark.versions import (
    GENERATOR_VERSION,
    GRADER_VERSION,
    SERVER_VERSION,
    suite_version,
)
from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.generation import instance_hash, secret_seed
from dataclean_env.leaderboard import db
from dataclean_env.leaderboard.secret import NoSecret, load_secret
from dataclean_env.leaderboard.tables import records, run_episodes, runs
from dataclean_env.schemas import Action, Reward
from dataclean_env.settings import Settings, get_settings


@dataclass(frozen=True)
class Replayed:
    instance_hash: str
    reward: Reward | None  # None when the trace no longer replays
    problem: str | None = None
    normalised: float | None = None


def replay(secret: bytes, family: str, index: int, trace: Sequence[dict[str, Any]]) -> Replayed:
    """Instance `index` of `family`'s secret split, with `trace` applied again."""
    digest = instance_hash(secret_seed(secret, family, index))
    make = partial(secret_instance, family, secret, index)
    episode = Episode("audit", make())
    for n, sent in enumerate(trace, start=1):
        try:
            episode.step(Action.model_validate(sent))
        except EnvError as error:
            return Replayed(digest, None, f"action {n} is refused now: {error.detail}")
    return Replayed(digest, episode.reward, None, round(anchors(make).normalise(episode.score), 6))


@dataclass
class Report:
    matched: int = 0
    differ: list[str] = field(default_factory=list)
    other_versions: int = 0
    rescored: int = 0

    @property
    def ok(self) -> bool:
        return not self.differ


def _rows(engine: Engine, run_id: str | None, version: str | None = None) -> list[Any]:
    query = (
        select(
            records,
            run_episodes.c.instance_index,
            run_episodes.c.instance_hash.label("planned_hash"),
            runs.c.suite,
        )
        .join(run_episodes, run_episodes.c.episode_id == records.c.episode_id)
        .join(runs, runs.c.run_id == records.c.run_id)
    )
    if run_id is not None:
        query = query.where(records.c.run_id == run_id)
    if version is not None:
        query = query.where(records.c.suite_version == version)
    with engine.connect() as connection:
        return list(connection.execute(query.order_by(records.c.id)))


def verify(
    engine: Engine, secret: bytes, run_id: str | None = None, version: str | None = None
) -> Report:
    report = Report()
    for row in _rows(engine, run_id, version):
        if row.grader_version != GRADER_VERSION:
            report.other_versions += 1
            continue
        again = replay(secret, row.family, row.instance_index, row.trace)
        where = f"{row.run_id} {row.episode_id}"
        if again.instance_hash != row.instance_hash or again.instance_hash != row.planned_hash:
            report.differ.append(f"{where}: the secret re-creates another instance")
        elif again.reward is None:
            report.differ.append(f"{where}: {again.problem}")
        elif again.reward.total != row.score or again.reward.model_dump() != row.components:
            report.differ.append(
                f"{where}: stored score {row.score}, replayed {again.reward.total}"
            )
        elif row.normalised is not None and again.normalised != row.normalised:
            report.differ.append(
                f"{where}: stored normalised score {row.normalised}, replayed {again.normalised}"
            )
        else:
            report.matched += 1
    return report


def rescore(
    engine: Engine, secret: bytes, grader_version: str = GRADER_VERSION, run_id: str | None = None
) -> Report:
    """Append a record under `grader_version` for each ended episode that has none."""
    report = Report()
    rows = _rows(engine, run_id)
    done = {row.episode_id for row in rows if row.grader_version == grader_version}
    latest = {row.episode_id: row for row in rows}  # ordered by id: the newest record wins
    for episode_id, row in latest.items():
        if episode_id in done:
            continue
        again = replay(secret, row.family, row.instance_index, row.trace)
        if again.reward is None:
            report.differ.append(f"{row.run_id} {episode_id}: {again.problem}")
            continue
        values = {
            k: getattr(row, k)
            for k in (
                "episode_id", "run_id", "name", "model", "family", "difficulty",
                "instance_hash", "status", "trace", "steps", "refused", "started_at", "ended_at",
            )
        }  # fmt: skip
        values.update(
            score=again.reward.total,
            components=again.reward.model_dump(),
            recorded_at=datetime.now(UTC),
            server_version=SERVER_VERSION,
            grader_version=grader_version,
            generator_version=GENERATOR_VERSION,
            suite_version=suite_version(row.suite, grader_version) if row.suite else None,
            normalised=again.normalised,
            figures=row.figures,
        )
        with engine.begin() as connection:
            connection.execute(insert(records).values(**values))
        report.rescored += 1
    return report


def open_database(settings: Settings) -> tuple[Engine, bytes | None]:
    """The board and its secret; None for a board that never stored one, which holds no
    record (a server stores the secret before it records anything): nothing to replay."""
    engine = db.connect(db.database_url(settings.database_url, settings.leaderboard_db))
    db.migrate(engine)
    given = settings.leaderboard_secret
    try:
        secret = load_secret(engine, given.get_secret_value() if given else None, create=False)
    except NoSecret:
        if _rows(engine, None):
            engine.dispose()
            raise
        return engine, None
    return engine, secret


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dataclean_env.leaderboard.audit",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--run", help="audit this run only")
    parser.add_argument("--version", help="audit the records of this suite version only")
    parser.add_argument("--rescore", action="store_true", help="record scores under this grader")
    args = parser.parse_args(argv)
    try:
        engine, secret = open_database(get_settings())
    except NoSecret as error:
        raise SystemExit(f"cannot audit: {error}") from None
    try:
        if secret is None:  # nothing was ever recorded
            report = Report()
        else:
            if args.rescore:
                done = rescore(engine, secret, GRADER_VERSION, args.run)
                print(f"rescored {done.rescored} episodes under {GRADER_VERSION}")
                for line in done.differ:
                    print(f"cannot rescore {line}")
            report = verify(engine, secret, args.run, args.version)
    finally:
        engine.dispose()
    for line in report.differ:
        print(f"DIFFERS {line}")
    print(
        f"audited under {GRADER_VERSION}: {report.matched} records match, "
        f"{len(report.differ)} differ; {report.other_versions} of other grader versions"
    )
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
