"""Typed errors of the engine and the HTTP status each maps to (the one place that decides)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError


class EnvError(Exception):
    """Base of every error a client can cause. `code` is machine-readable, `status` is HTTP."""

    code = "BAD_REQUEST"
    status = 400
    retry_after: int | None = None  # seconds, sent as a Retry-After header when set

    def __init__(self, detail: str, **fields: Any):
        super().__init__(detail)
        self.detail = detail
        # Machine-readable details sent beside `code` (a refused operation's `allowed`
        # and `did_you_mean`).
        self.fields = fields

    def retry_in(self, seconds: int) -> EnvError:
        """This error with its own Retry-After (the class's is the usual wait)."""
        self.retry_after = seconds
        return self


class UnknownTask(EnvError):
    code = "UNKNOWN_TASK"
    status = 404


class NoInstances(EnvError):
    """Instances are listed for generated families; any other task is its one instance."""

    code = "NO_INSTANCES"
    status = 404


class UnknownEpisode(EnvError):
    code = "UNKNOWN_EPISODE"
    status = 404


class UnknownOperation(EnvError):
    code = "UNKNOWN_OPERATION"
    status = 422


class OperationNotAllowed(EnvError):
    code = "OPERATION_NOT_ALLOWED"
    status = 422


class InvalidParameters(EnvError):
    code = "INVALID_PARAMETERS"
    status = 422


class InvalidAction(EnvError):
    """The request is not an action envelope at all."""

    code = "INVALID_ACTION"
    status = 422


class InvalidJson(InvalidAction):
    """The body is not JSON; the detail says the line and column where it stops being so
    (the code is /ws's for the same fault)."""

    code = "INVALID_JSON"


class TaskMismatch(EnvError):
    """An episode id was given together with a different task id."""

    code = "TASK_MISMATCH"
    status = 409


class OperationFailed(EnvError):
    """The parameters are well-formed but the operation cannot apply to this table."""

    code = "OPERATION_FAILED"
    status = 422


class LabelsNotOffered(EnvError):
    """`label` on an episode that offers no labels (a leaderboard episode, say)."""

    code = "LABELS_NOT_OFFERED"
    status = 422


class LabelBudgetExceeded(EnvError):
    """`label` asked for more rows than the episode's label budget has left."""

    code = "LABEL_BUDGET_EXCEEDED"
    status = 422


class PhaseOutOfOrder(EnvError):
    """A phased task (the audit) was sent a phase before its turn or after it was over."""

    code = "PHASE_OUT_OF_ORDER"
    status = 409


class ServerFault(OperationFailed):
    """The engine failed where the client did nothing wrong (an unforeseen pandas corner, a
    fault after the operation ran): refused and rolled back, but not counted against the
    client's refusal allowance."""


class EpisodeFinished(EnvError):
    code = "EPISODE_FINISHED"
    status = 409


class StoreFull(EnvError):
    code = "SERVER_FULL"
    status = 503
    retry_after = 5  # seconds; sent as Retry-After


class ClientQuotaReached(EnvError):
    """One client holds its share of a pool (DCE_SESSIONS_PER_CLIENT, or
    DCE_LEADERBOARD_OPEN_RUNS_PER_CLIENT for open runs): others are served."""

    code = "CLIENT_QUOTA_REACHED"
    status = 503
    retry_after = 30  # seconds; sent as Retry-After (a /ws error frame says it in words)


class Misdirected(EnvError):
    """The call names an episode whose home is another of the server's processes (the
    balancer routes by the same rule, so a client sees this only when the balancer and the
    server read the call differently): it is neither created nor served here."""

    code = "MISDIRECTED"
    status = 421


class BodyTooLarge(EnvError):
    code = "BODY_TOO_LARGE"
    status = 413


def describe(exc: ValidationError, subject: str = "body") -> str:
    """The one formatter of validation errors every door uses: `where: message; ...`."""
    return "; ".join(
        f"{'.'.join(str(p) for p in error['loc']) or subject}: {error['msg']}"
        for error in exc.errors(include_url=False)
    )


class ViewRefused(EnvError):
    """The table viewer is not open to blind (leaderboard) episodes: it would let an agent
    read every row without spending the steps `show_rows` costs."""

    code = "VIEW_REFUSED"
    status = 403


# ── limits and edge refusals (docs/DESIGN.md, "Limits") ──


class InvalidText(EnvError):
    """Text that is not valid Unicode (a lone UTF-16 surrogate such as "\\ud800")."""

    code = "INVALID_TEXT"
    status = 422


class TooLarge(EnvError):
    """A cell, a table or an action past its size limit."""

    code = "TOO_LARGE"
    status = 422


class StepTimeLimit(OperationFailed):
    """The step used up its engine time (DCE_STEP_SECONDS)."""

    code = "STEP_TIME_LIMIT"
    status = 422


class InvalidSubmission(EnvError):
    """A leaderboard submission or run request that breaks its bounds."""

    code = "INVALID_SUBMISSION"
    status = 422


class InvalidName(EnvError):
    """A name shown on the board (submitter, model) that is empty, too long once
    NFKC-normalised, or holds an invisible or text-reordering character."""

    code = "INVALID_NAME"
    status = 422


class InvalidToken(EnvError):
    """A submitter token (`Authorization: Bearer ...`) that is unknown, revoked or malformed."""

    code = "INVALID_TOKEN"
    status = 401


class TokenModelMismatch(EnvError):
    """A run under a submitter token names another model than the one the token is bound
    to: one token is one board row, so a model is chosen when the token is made."""

    code = "TOKEN_MODEL_MISMATCH"
    status = 422


class TokenRequired(EnvError):
    """DCE_LEADERBOARD_REQUIRE_TOKEN is set and the run request carries no token."""

    code = "TOKEN_REQUIRED"
    status = 401


class UnknownRun(EnvError):
    code = "UNKNOWN_RUN"
    status = 404


class UnknownSuite(EnvError):
    """A board asked for by a suite name no suite has (GET /leaderboard?suite=...)."""

    code = "UNKNOWN_SUITE"
    status = 404


class RateLimited(EnvError):
    code = "RATE_LIMITED"
    status = 429

    def __init__(self, detail: str, retry_after: int = 1):
        super().__init__(detail)
        self.retry_after = retry_after


class HostNotAllowed(EnvError):
    """The request names a Host the server does not answer for (DNS rebinding)."""

    code = "HOST_NOT_ALLOWED"
    status = 400


class OriginNotAllowed(EnvError):
    """A browser page from another origin tried a state-changing request."""

    code = "ORIGIN_NOT_ALLOWED"
    status = 403


class UnsupportedMediaType(EnvError):
    code = "UNSUPPORTED_MEDIA_TYPE"
    status = 415


class RequestTimeout(EnvError):
    code = "REQUEST_TIMEOUT"
    status = 408


class LeaderboardUnavailable(EnvError):
    """The leaderboard's database cannot be opened (the rest of the server still works)."""

    code = "LEADERBOARD_UNAVAILABLE"
    status = 503
    retry_after = 5


class LimitsUnavailable(EnvError):
    """The shared limit store (DCE_LIMITS_DB) cannot be reached: a call that a limit counts
    (a reset, a session) is refused, since it cannot be counted; steps go on."""

    code = "LIMITS_UNAVAILABLE"
    status = 503
    retry_after = 5


class SqlRefused(EnvError):
    """SQL the sandbox does not run: a statement kind the operation does not allow, a
    statement DuckDB cannot parse or run, or one that reaches past the table `t`."""

    code = "SQL_REFUSED"
    status = 422


class SqlUnavailable(EnvError):
    """The SQL sandbox's worker process could not be started (the rest of the server and
    every other operation still work)."""

    code = "SQL_UNAVAILABLE"
    status = 503
    retry_after = 5
