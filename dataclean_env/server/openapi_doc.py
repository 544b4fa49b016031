"""The OpenAPI document, made to say what the server does (schemathesis checks it).

FastAPI documents its own 422 shape (`HTTPValidationError`); every error here is
`{"detail", "code"}`. This module documents that shape for every error status each route can
answer (the edge's 403/408/413/415 on every POST, 404/409/429/503 where they apply), and
lifts the `$defs` of hand-written request bodies into `components`, where their references
resolve.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

ERROR_SCHEMA = {
    "title": "Error",
    "type": "object",
    "required": ["detail", "code"],
    "properties": {
        "detail": {"type": "string", "description": "What was wrong, for people."},
        "code": {"type": "string", "description": "Machine-readable code (docs/DESIGN.md)."},
    },
}
ERROR_STATUS = {
    "400": "Bad request (OpenEnv task API: index out of range)",
    "403": "ORIGIN_NOT_ALLOWED: a browser page of another origin",
    "404": "UNKNOWN_TASK, UNKNOWN_EPISODE (absent, expired, another task's, or lost in a "
    "restart: reset), NOT_FOUND",
    "408": "REQUEST_TIMEOUT: the body was sent too slowly",
    "409": "TASK_MISMATCH, EPISODE_FINISHED",
    "413": "BODY_TOO_LARGE",
    "415": "UNSUPPORTED_MEDIA_TYPE: bodies must be application/json",
    "422": "INVALID_ACTION, INVALID_PARAMETERS, INVALID_TEXT, UNKNOWN_OPERATION, "
    "OPERATION_NOT_ALLOWED, OPERATION_FAILED, STEP_TIME_LIMIT, TOO_LARGE, INVALID_REQUEST",
    "429": "RATE_LIMITED (see Retry-After)",
    "503": "SERVER_FULL, CLIENT_QUOTA_REACHED (see Retry-After)",
}
RETRY_AFTER = {
    "Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "string"}}
}


def error_statuses(method: str, path: str) -> list[str]:
    statuses = {"404", "422"}
    if method == "post":
        statuses |= {"403", "408", "413", "415"}
    if path.startswith("/reset"):
        statuses |= {"409", "429", "503"}
    if path.startswith("/step"):
        statuses |= {"409"}
    if path == "/mcp":
        statuses |= {"429"}
    if path.startswith("/leaderboard"):  # rate limits, a full server, an unusable database
        statuses |= {"429", "503"}
    if path.startswith("/episodes/"):  # a finished episode (heuristic), a blind one (table)
        statuses |= {"403", "409"}
    if path.startswith("/{env_name}"):
        statuses |= {"400"}
    return sorted(statuses)


def _lift_defs(node: Any, defs: dict[str, Any]) -> Any:
    """`node` with `$defs` moved into `defs` and `#/$defs/X` references rewritten."""
    if isinstance(node, dict):
        defs.update({k: _lift_defs(v, defs) for k, v in node.pop("$defs", {}).items()})
        return {
            k: (
                v.replace("#/$defs/", "#/components/schemas/")
                if k == "$ref" and isinstance(v, str)
                else _lift_defs(v, defs)
            )
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_lift_defs(v, defs) for v in node]
    return node


def document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    defs: dict[str, Any] = {}
    schema["paths"] = _lift_defs(schema["paths"], defs)
    for name, definition in defs.items():
        components.setdefault(name, definition)
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    components["Error"] = ERROR_SCHEMA
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            for status in error_statuses(method, path):
                responses[status] = {
                    "description": ERROR_STATUS[status],
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                }
                if status in ("429", "503"):
                    responses[status]["headers"] = RETRY_AFTER
    return schema


def name_path_values(schema: dict[str, Any], task_ids: list[str], env_name: str) -> None:
    """Path parameters take known values: the task ids, the environment's name (so the
    document, and a fuzzer, say which paths exist)."""
    for operations in schema["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("in") != "path":
                    continue
                if parameter["name"] == "task_id":
                    parameter["schema"] = {"type": "string", "enum": task_ids, "title": "Task Id"}
                elif parameter["name"] == "env_name":
                    parameter["schema"] = {"type": "string", "enum": [env_name], "title": "Env"}


def install_openapi(app: FastAPI, task_ids: list[str], env_name: str) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            name_path_values(schema, task_ids, env_name)
            app.openapi_schema = document_errors(schema)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
