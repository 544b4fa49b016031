"""Typed errors of the engine and the HTTP status each maps to (the one place that decides)."""

from __future__ import annotations


class EnvError(Exception):
    """Base of every error a client can cause. `code` is machine-readable, `status` is HTTP."""

    code = "BAD_REQUEST"
    status = 400

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class UnknownTask(EnvError):
    code = "UNKNOWN_TASK"
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


class TaskMismatch(EnvError):
    """An episode id was given together with a different task id."""

    code = "TASK_MISMATCH"
    status = 409


class OperationFailed(EnvError):
    """The parameters are well-formed but the operation cannot apply to this table."""

    code = "OPERATION_FAILED"
    status = 422


class EpisodeFinished(EnvError):
    code = "EPISODE_FINISHED"
    status = 409


class StoreFull(EnvError):
    code = "SERVER_FULL"
    status = 503


class BodyTooLarge(EnvError):
    code = "BODY_TOO_LARGE"
    status = 413


class InvalidSubmission(EnvError):
    """A leaderboard submission or run request that breaks its bounds."""

    code = "INVALID_SUBMISSION"
    status = 422


class UnknownRun(EnvError):
    code = "UNKNOWN_RUN"
    status = 404


class RateLimited(EnvError):
    code = "RATE_LIMITED"
    status = 429


class LeaderboardUnavailable(EnvError):
    """The leaderboard's database cannot be opened (the rest of the server still works)."""

    code = "LEADERBOARD_UNAVAILABLE"
    status = 503
