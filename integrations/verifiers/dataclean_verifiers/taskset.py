"""Data Cleaning OpenEnv as a verifiers (v1) taskset, played through verifiers' OpenEnv bridge.

Each task is one instance of the environment, `(task_id, seed, split)`, on a running server.
A rollout is the bridge's exchange: reset the instance over `/ws`, send the model the
observation and the action schema, step with the model's JSON reply, repeat until the episode
is done, and score the rollout with the sum of the step rewards (`openenv_reward`: the final
minus the initial score, as the server computes it).

Two things are added to the stock bridge (`OpenEnvEnv.run`), and both can be switched off:
a compact action schema (`GET /schema/compact?task_id=...`, about a tenth of the full
`/schema` action, limited to the task's operations) and a cap on model turns. With
`compact_schema=False` and `max_turns=None` every rollout runs the stock bridge unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

import httpx
import verifiers.v1 as vf
from openenv import GenericEnvClient
from pydantic import Field
from verifiers.v1.tasksets.openenv import (
    OpenEnvConfig,
    OpenEnvData,
    OpenEnvEnv,
)
from verifiers.v1.tasksets.openenv.taskset import parse_action

SYSTEM_PROMPT = (
    "You clean a dirty data table, one operation per turn. Each user turn is JSON with the "
    "current observation (task description, columns, dtypes, missing counts, sample rows, the "
    "last step's message, and after a query its result in query_result) and the action schema. "
    "Reply with exactly one JSON object and nothing "
    'else: {"operation": "<name>", "parameters": {...}}. Call finish when the table is clean.'
)


class DataCleaningConfig(OpenEnvConfig):
    """Which instances to play, under `--env.taskset.*`."""

    base_url: str | None = "http://127.0.0.1:7860"
    """The running server (a local `uv run server` or a deployed Space)."""
    families: list[str] = Field(default_factory=lambda: ["fixed"])
    """Family names as `GET /tasks` lists them (fixed, generated, custom), `all`, or task ids."""
    split: Literal["train", "eval", "test"] = "eval"
    """Split of the generated families (the fixed tasks ignore it)."""
    seeds: str = "0"
    """Seeds as a list and ranges: '0-9', '3,5,7', '0-4,10'."""
    num_tasks: int | None = Field(None, ge=1)
    """Stop after this many instances (None: every family x seed)."""
    max_turns: int | None = Field(50, ge=1)
    """Model turns per episode (None: until the episode is done). Refused actions do not use
    the episode's step budget, so without a cap a model that never acts well never stops."""
    compact_schema: bool = True
    """Send the compact action schema instead of the full JSON schema of `/schema`."""


class DataCleaningData(OpenEnvData):
    max_turns: int | None
    compact_schema: bool


class DataCleaningTask(vf.Task[DataCleaningData]):
    pass


class DataCleaningTaskset(vf.Taskset[DataCleaningTask, DataCleaningConfig]):
    """One task per (task id, seed) of the configured families, seeds outermost."""

    def load(self) -> Iterator[DataCleaningTask]:
        config = self.config
        assert config.base_url is not None, "the data-cleaning taskset plays a running server"
        resets = training_rows(
            config.base_url, config.families, config.seeds, config.split, config.num_tasks
        )
        for reset in resets:
            yield DataCleaningTask(
                DataCleaningData(
                    name=f"{reset['task_id']}/{reset['split']}/{reset['seed']}",
                    prompt=None,
                    system_prompt=SYSTEM_PROMPT,
                    env=None,
                    base_url=config.base_url,
                    use_docker=False,
                    provider_kwargs={},
                    reset=reset,
                    max_turns=config.max_turns,
                    compact_schema=config.compact_schema,
                ),
                config.task,
            )


class DataCleaningEnv(OpenEnvEnv):
    """The stock OpenEnv bridge, plus the compact schema and the turn cap when asked for."""

    async def run(self, task, agents):
        data = task.data
        if not isinstance(data, DataCleaningData) or (
            not data.compact_schema and data.max_turns is None
        ):
            return await super().run(task, agents)
        total = 0.0
        async with GenericEnvClient(base_url=data.base_url) as client:
            action_schema = await fetch_action_schema(
                data.base_url, data.reset.get("task_id"), compact=data.compact_schema
            )
            result = await client.reset(**data.reset)

            def payload() -> str:
                return json.dumps(
                    {"observation": result.observation, "action_schema": action_schema},
                    ensure_ascii=False,
                )

            turns = 0
            async with agents.player.interaction(task) as interaction:
                segment = await interaction.turn(payload())
                turns += 1
                while not segment.terminated and not result.done:
                    action = segment.last_reply.strip()
                    if not action:
                        interaction.trace.stop("empty_action")
                        break
                    result = await client.step(parse_action(action, action_schema))
                    total += result.reward or 0.0
                    if result.done:
                        break
                    if data.max_turns is not None and turns >= data.max_turns:
                        interaction.trace.stop("max_turns")
                        break
                    segment = await interaction.turn(payload())
                    turns += 1
                # Recorded before the exchange closes, so the rollout's log line shows it.
                interaction.trace.record_reward("openenv_reward", total)


async def fetch_action_schema(base_url: str, task_id: str | None, compact: bool) -> dict[str, Any]:
    """The compact schema of the task's operations, or the full `/schema` action (also the
    fallback for a server without `/schema/compact`)."""
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as http:
        if compact:
            params = {"task_id": task_id} if task_id else {}
            response = await http.get("/schema/compact", params=params)
            if response.status_code != 404:
                response.raise_for_status()
                return response.json()
        response = await http.get("/schema")
        response.raise_for_status()
        return response.json()["action"]


def training_rows(
    base_url: str, families: list[str], seeds: str, split: str, n: int | None
) -> list[dict[str, Any]]:
    """The environment's own rows (`GET /tasks/rows`, `dataclean_env.training.rows` on the
    server): reset arguments per task and seed, seed by seed, so a prefix covers every task."""
    params: dict[str, Any] = {"families": ",".join(families), "split": split, "seeds": seeds}
    if n is not None:
        params["n"] = n
    answer = httpx.get(f"{base_url.rstrip('/')}/tasks/rows", params=params, timeout=30)
    if answer.status_code in (404, 422):  # an unknown family, a bad seed list: its words
        raise ValueError(answer.text)
    answer.raise_for_status()
    rows: list[dict[str, Any]] = answer.json()["rows"]
    return rows
