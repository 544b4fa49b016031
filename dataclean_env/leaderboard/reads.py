"""The leaderboard's reads: a run's record and the boards. They never write: what a sweep
would change (late episodes timed out, records retried) is the periodic sweep's job
(`Leaderboard.heartbeat`), so a read shows the database as it stands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dataclean_env.benchmark.suite import (
    suite_named,
    suites,
)
from dataclean_env.benchmark.versions import (
    GRADER_VERSION,
    suite_version,
)
from dataclean_env.errors import (
    UnknownRun,
    UnknownSuite,
)
from dataclean_env.leaderboard import board
from dataclean_env.leaderboard.holders import Holders, as_utc
from dataclean_env.leaderboard.runs import DEFAULT_SUITE, EXPIRED, max_steps
from dataclean_env.leaderboard.withdraw import WITHDRAWN, reason

if TYPE_CHECKING:
    from sqlalchemy import ColumnElement


BOARD_LIMIT = 500  # entries per board in one answer


class Reads(Holders):
    def run(self, run_id: str) -> dict[str, Any]:
        """A run's record: its status, versions, what the agent declared, the scores of its
        ended episodes and their summary (never its episode ids: the run id is public, the
        episode ids are what lets one play)."""
        from sqlalchemy import select

        from dataclean_env.leaderboard.tables import records, run_episodes, runs

        with self.open().connect() as connection:
            row = connection.execute(select(runs).where(runs.c.run_id == run_id)).one_or_none()
            if row is None:
                raise UnknownRun(f"no leaderboard run {run_id!r}")
            version = suite_version(row.suite) if row.suite else None
            episodes = connection.execute(
                select(
                    run_episodes.c.position,
                    run_episodes.c.family,
                    run_episodes.c.difficulty,
                    run_episodes.c.status,
                )
                .where(run_episodes.c.run_id == run_id)
                .order_by(run_episodes.c.position)
            ).all()
            scored = {
                r.position: r
                for r in connection.execute(
                    select(
                        run_episodes.c.position,
                        records.c.family,
                        records.c.difficulty,
                        records.c.status,
                        records.c.score,
                        records.c.normalised,
                        records.c.steps,
                        records.c.refused,
                        records.c.figures,
                    )
                    .join(records, records.c.episode_id == run_episodes.c.episode_id)
                    .where(records.c.run_id == run_id, records.c.grader_version == GRADER_VERSION)
                )
            }
        # No score of a run is shown before it ends (so that none can decide whether to
        # finish it); a closed run counts its unfinished episodes as doing nothing.
        shown = {} if row.status == "open" else scored
        ended = [
            board.Scored.of(shown[e.position])
            if e.position in shown and shown[e.position].status == "finished"
            else board.Scored.nothing(e.family, e.difficulty)
            for e in episodes
            if e.position in shown or row.status in board.SUMMED_WHOLE
        ]
        summary = board.summary(ended) if ended else None
        return {
            "run_id": row.run_id,
            "name": row.name,
            "model": row.model,
            "anonymous": row.token_id is None,
            "status": row.status,
            "ranked": row.status in board.POOLED and row.suite is not None,
            "suite": row.suite,
            "suite_version": version,
            "grader_version": GRADER_VERSION,
            "generator_version": row.generator_version,
            "server_version": row.server_version,
            "declared": {"model": row.model, **(row.declared or {})},
            "rollouts": row.rollouts,
            "step_budgets": {f: max_steps(f, self.secret) for f in row.families},
            "created_at": as_utc(row.created_at).isoformat(),
            "withdrawn": reason(self.open(), run_id) if row.status == WITHDRAWN else None,
            "mean": summary["raw"] if row.status == "complete" and summary else None,
            "summary": summary,
            "episodes": [
                {
                    "position": e.position,
                    "task_id": e.family,
                    "difficulty": e.difficulty,
                    "status": e.status,
                    "score": shown[e.position].score if e.position in shown else None,
                    "normalised": shown[e.position].normalised if e.position in shown else None,
                }
                for e in episodes
            ],
        }

    # ── the boards ────────────────────────────────────────────────────────
    def boards(
        self,
        suite: str | None = None,
        version: str | None = None,
        grader_version: str | None = None,
    ) -> dict[str, Any]:
        """The self-reported board, and the verified board of one suite version: `version`,
        else `suite` (default the full suite) under `grader_version` (default this code's)."""
        from sqlalchemy import func, select

        from dataclean_env.leaderboard.tables import records, run_episodes, runs, submissions

        try:
            shown = suite_named(suite or DEFAULT_SUITE)
        except KeyError:
            names = ", ".join(suites())
            raise UnknownSuite(f"no suite {suite!r}; the suites: {names}") from None
        wanted = version or suite_version(shown.version, grader_version or GRADER_VERSION)
        with self.open().connect() as connection:
            versioned = select(records.c.run_id).where(records.c.suite_version == wanted).distinct()
            listed: ColumnElement[bool] = runs.c.run_id.in_(versioned)
            if wanted == suite_version(shown.version):  # this code's board also lists the
                # suite's runs that are not complete, recorded or not (say, never joined)
                listed |= (runs.c.suite == shown.version) & (runs.c.status != "complete")
            listed &= runs.c.status.not_in((WITHDRAWN, EXPIRED))  # off the board, or unplayed
            played = [
                board.RunRow(
                    r.run_id,
                    r.name,
                    r.model,
                    r.token_id is None,
                    r.status,
                    r.episodes,
                    r.created_at,
                    r.rollouts,
                    r.token_id,
                )
                for r in connection.execute(
                    select(
                        runs.c.run_id,
                        runs.c.name,
                        runs.c.model,
                        runs.c.token_id,
                        runs.c.status,
                        runs.c.episodes,
                        runs.c.created_at,
                        runs.c.rollouts,
                    ).where(listed)
                )
            ]
            scores: dict[str, list[board.Scored]] = {}
            finished: dict[str, board.Scored] = {}  # episode id -> its record
            timed_out = {r.run_id for r in played if r.status == "timed_out"}
            for row in connection.execute(
                select(
                    records.c.run_id, records.c.episode_id, records.c.family,
                    records.c.difficulty, records.c.status, records.c.score,
                    records.c.normalised, records.c.steps, records.c.refused, records.c.figures,
                ).where(records.c.suite_version == wanted)
            ):  # fmt: skip
                if row.run_id not in timed_out:  # (an open run's: counted, never shown)
                    scores.setdefault(row.run_id, []).append(board.Scored.of(row))
                elif row.status == "finished":
                    finished[row.episode_id] = board.Scored.of(row)
            # A run that timed out: every episode but the finished ones counts as doing
            # nothing.
            for episode in connection.execute(
                select(
                    run_episodes.c.run_id, run_episodes.c.episode_id, run_episodes.c.family,
                    run_episodes.c.difficulty, run_episodes.c.status,
                )
                .where(run_episodes.c.run_id.in_(sorted(timed_out)))
                .order_by(run_episodes.c.run_id, run_episodes.c.position)
            ):  # fmt: skip
                kept = finished.get(episode.episode_id) if episode.status == "finished" else None
                scores.setdefault(episode.run_id, []).append(
                    kept or board.Scored.nothing(episode.family, episode.difficulty)
                )
            best = connection.execute(
                select(
                    submissions.c.model_name, submissions.c.task_id, func.max(submissions.c.score)
                ).group_by(submissions.c.model_name, submissions.c.task_id)
            ).all()
            total = connection.execute(select(func.count()).select_from(submissions)).scalar_one()
        named, anonymous, unranked = board.verified(played, scores, BOARD_LIMIT)
        return {
            "leaderboard": board.self_reported(best, BOARD_LIMIT),
            "total_submissions": total,
            "verified": {
                "title": f"{wanted}: {shown.episodes} episodes per run, normalised score",
                "suite": shown.name,
                "suite_version": wanted,
                "grader_version": grader_version or GRADER_VERSION,
                "episodes_per_run": shown.episodes,
                "entries": named,
                "anonymous": anonymous,
                "unranked": unranked,
                "suites": {s.name: suite_version(s.version) for s in suites().values()},
            },
        }
