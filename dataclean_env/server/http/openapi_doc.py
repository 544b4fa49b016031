"""The OpenAPI document, made to say what the server does (schemathesis checks it).

FastAPI documents its own 422 shape (`HTTPValidationError`); every error here is
`{"detail", "code"}`. This module documents that shape for every error status each route can
answer (the edge's 403/408/413/415 on every POST, 404/409/429/503 where they apply), and
lifts the `$defs` of hand-written request bodies into `components`, where their references
resolve. Every request body and path parameter carries an `example`, which Swagger UI's
"Try it out" sends as it is (without one it makes values up from the schema, a seed of
9223372036854776000 among them).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

from dataclean_env.engine.episode_ids import EPISODE_ID_CHARS, SERVER_PREFIX
from dataclean_env.generation import SPLITS
from dataclean_env.operations.registry import alias_names, operation_names
from dataclean_env.schemas import EXAMPLE_EPISODE_ID, EXAMPLE_TASK_ID
from dataclean_env.tasks.generated import FAMILIES

ERROR_SCHEMA = {
    "title": "Error",
    "type": "object",
    "required": ["detail", "code"],
    "properties": {
        "detail": {"type": "string", "description": "What was wrong, for people."},
        "code": {"type": "string", "description": "Machine-readable code (docs/DESIGN.md)."},
        "allowed": {
            "type": "array",
            "items": {"type": "string"},
            "description": "UNKNOWN_OPERATION, OPERATION_NOT_ALLOWED: the task's operations.",
        },
        "did_you_mean": {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "description": "UNKNOWN_OPERATION, OPERATION_NOT_ALLOWED: the nearest of them.",
        },
    },
}
ERROR_STATUS = {
    "400": "Bad request (OpenEnv task API: index out of range)",
    "403": "ORIGIN_NOT_ALLOWED: a browser page of another origin",
    "404": "UNKNOWN_TASK, UNKNOWN_EPISODE (absent, expired, another task's, or lost in a "
    "restart: reset), NO_INSTANCES (not a generated family), NOT_FOUND",
    "408": "REQUEST_TIMEOUT: the body was sent too slowly",
    "409": "TASK_MISMATCH, EPISODE_FINISHED",
    "413": "BODY_TOO_LARGE",
    "415": "UNSUPPORTED_MEDIA_TYPE: bodies must be application/json",
    "422": "INVALID_JSON (with the line and column), INVALID_ACTION, INVALID_PARAMETERS, INVALID_TEXT, UNKNOWN_OPERATION, "
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


def request_body(
    model: type[BaseModel], *, required: bool = False, example: Any = None
) -> dict[str, Any]:
    """`openapi_extra` documenting a JSON body read by hand as `model`, with `example` (by
    default the model's first) as the example Swagger UI sends."""
    schema = model.model_json_schema()
    media = {"schema": schema, "example": example or schema["examples"][0]}
    return {"requestBody": {"required": required, "content": {"application/json": media}}}


# Run ids are drawn by the server: the example names none (its "Try it out" answers 404).
EXAMPLE_RUN_ID = "run-0123456789abcdef"


def name_path_values(schema: dict[str, Any], task_ids: list[str], env_name: str) -> None:
    """Path parameters take known values: the task ids, the environment's name (so the
    document, and a fuzzer, say which paths exist); each has an example."""
    examples = {
        "task_id": EXAMPLE_TASK_ID,
        "env_name": env_name,
        "episode_id": EXAMPLE_EPISODE_ID,
        "run_id": EXAMPLE_RUN_ID,
    }
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("in") != "path":
                    continue
                parameter["example"] = examples[parameter["name"]]
                if parameter["name"] == "task_id":
                    parameter["schema"] = {"type": "string", "enum": task_ids, "title": "Task Id"}
                    if path == "/tasks/{task_id}/instances":  # a generated family's
                        parameter["example"] = next(iter(FAMILIES))
                elif parameter["name"] == "env_name":
                    parameter["schema"] = {"type": "string", "enum": [env_name], "title": "Env"}


# The id rules of episode_ids.check_episode_id and check_client_id, as JSON Schema patterns.
EPISODE_ID = {"type": "string", "pattern": f"^{EPISODE_ID_CHARS}$"}
CLIENT_ID = {"type": "string", "pattern": f"^(?!{SERVER_PREFIX}){EPISODE_ID_CHARS}$"}
ID_PARAMETERS = ("episode_id", "X-Episode-Id")


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def declare_rules(schema: dict[str, Any], task_ids: list[str]) -> None:
    """Rules the server enforces that the models leave out: the id patterns (a client's id
    may not take the server's prefix), the task ids a body may name, the operation names,
    that a step names an operation, the tasks that have instances (generated families)."""
    names = {"enum": sorted(operation_names() + alias_names())}
    for path, methods in schema["paths"].items():
        for operation in methods.values():
            for parameter in operation.get("parameters", []):
                if parameter["name"] in ID_PARAMETERS:
                    parameter["schema"] = dict(EPISODE_ID)
                elif path == "/tasks/{task_id}/instances" and parameter["name"] == "task_id":
                    parameter["schema"]["enum"] = list(FAMILIES)
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            fields = (body or {}).get("schema", {}).get("properties", {})
            if path.startswith(("/reset", "/step")):
                if "task_id" in fields:
                    fields["task_id"] = _nullable({"type": "string", "enum": task_ids})
                if "episode_id" in fields:
                    rule = CLIENT_ID if path.startswith("/reset") else EPISODE_ID
                    fields["episode_id"] = _nullable(dict(rule))
            if path.startswith("/reset") and body is not None:  # a JSON null: no options
                body["schema"] = _nullable(body["schema"])
            if path == "/leaderboard/runs":
                families = {"type": "string", "enum": list(FAMILIES)}
                fields["families"] = _nullable(
                    {"type": "array", "items": families, "minItems": 1, "maxItems": 16}
                )
            if path == "/step":  # an operation at the top, or an action (not both)
                fields["operation"] = {"type": "string", **names}
                fields["parameters"] = _nullable({"type": "object"})  # null: {}
                fields["action"] = {"$ref": "#/components/schemas/Action"}
                body["schema"].update(
                    additionalProperties=False,
                    oneOf=[
                        {"required": ["operation"], "not": {"required": ["action"]}},
                        {
                            "required": ["action"],
                            "not": {
                                "anyOf": [{"required": [k]} for k in ("operation", "parameters")]
                            },
                        },
                    ],
                )
            elif fields.get("operation", {}).get("title") == "Operation":  # an Action body
                fields["operation"].update(names)
                fields["parameters"] = _nullable(fields["parameters"])  # null: {}
            if path.startswith("/leaderboard/"):  # a name must hold more than spaces
                for name in ("name", "model", "model_name"):
                    if name in fields:
                        fields[name].update(minLength=1, pattern=r"\S")
    components = schema["components"]["schemas"]
    if "Action" in components:
        action = components["Action"]["properties"]
        action["operation"].update(names)
        action["parameters"] = _nullable(action["parameters"])
    for request in ("ListTasksRequest", "NumTasksRequest", "GetTaskRequest", "GetTaskRangeRequest"):
        if "split" in components.get(request, {}).get("properties", {}):  # OpenEnv's task API
            components[request]["properties"]["split"] = {"type": "string", "enum": list(SPLITS)}
    for path, example in OPENENV_TASK_EXAMPLES.items():
        body = schema["paths"].get(path, {}).get("post", {})
        if "requestBody" in body:
            body["requestBody"]["content"]["application/json"]["example"] = example


# The bodies of OpenEnv's task API (its models, not this server's), by path.
OPENENV_TASK_EXAMPLES = {
    "/{env_name}/tasks": {"split": "train"},
    "/{env_name}/num_tasks": {"split": "train"},
    "/{env_name}/task": {"split": "train", "index": 0},
    "/{env_name}/task_range": {"split": "train", "start": 0, "stop": 3},
}


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
            declare_rules(app.openapi_schema, task_ids)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
