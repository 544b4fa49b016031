"""`GET /schema/compact`: the action space in one line per operation (beside OpenEnv's full
`GET /schema`), for clients that resend it every turn, such as verifiers' OpenEnv bridge."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from dataclean_env.operations import with_aliases
from dataclean_env.server.http.compact_schema import compact_action_schema
from dataclean_env.server.http.deps import get_registry
from dataclean_env.tasks import TaskRegistry

router = APIRouter(tags=["service"])
Registry = Annotated[TaskRegistry, Depends(get_registry)]


@router.get("/schema/compact")
async def compact_schema(registry: Registry, task_id: str | None = None) -> dict[str, Any]:
    """The action envelope and `name(params) - description` per operation: every operation,
    or only those of `task_id` (an unknown task is a 404)."""
    if task_id is None:
        return compact_action_schema()
    return compact_action_schema(with_aliases(registry.spec(task_id).operations))
