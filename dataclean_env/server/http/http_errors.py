"""Every error answer is `{"detail": ..., "code": ...}`; this module maps exceptions to them."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from dataclean_env.errors import EnvError, LeaderboardUnavailable

log = logging.getLogger(__name__)

_HTTP_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "BODY_TOO_LARGE"}


def error_response(
    status: int,
    code: str,
    detail: str,
    retry_after: int | None = None,
    headers: Mapping[str, str] | None = None,
    fields: Mapping[str, Any] | None = None,
) -> JSONResponse:
    # An error detail may quote client text; never let text that cannot be encoded turn an
    # error answer into a 500.
    detail = detail.encode("utf-8", "backslashreplace").decode("utf-8")
    headers = dict(headers or {})
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    body = {"detail": detail, "code": code, **(fields or {})}
    return JSONResponse(body, status_code=status, headers=headers)


def env_error_response(exc: EnvError) -> JSONResponse:
    return error_response(exc.status, exc.code, exc.detail, exc.retry_after, fields=exc.fields)


def database_down(exc: Exception) -> bool:
    """Whether `exc` is SQLAlchemy's word that the database cannot be reached (connection
    refused or lost), as opposed to a fault of the query. Looked up, not imported: the
    server imports SQLAlchemy only once the leaderboard opens its database."""
    sa_exc: Any = sys.modules.get("sqlalchemy.exc")
    return sa_exc is not None and isinstance(exc, (sa_exc.OperationalError, sa_exc.InterfaceError))


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(EnvError)
    async def _env_error(request: Request, exc: EnvError) -> JSONResponse:
        return env_error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        return error_response(422, "INVALID_REQUEST", "; ".join(parts))

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
        # Starlette's 405 names the allowed methods in `Allow` (RFC 9110 requires it).
        return error_response(exc.status_code, code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        if database_down(exc):
            log.warning("leaderboard database unavailable on %s: %s", request.url.path, exc)
            return env_error_response(
                LeaderboardUnavailable(
                    f"the leaderboard database is unavailable ({type(exc).__name__}); "
                    f"retry in {LeaderboardUnavailable.retry_after} s"
                )
            )
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "INTERNAL_ERROR", "internal error; the episode is unchanged")
