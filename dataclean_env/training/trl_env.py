"""Environments for TRL's `GRPOTrainer(..., environment_factory=...)`.

TRL builds one instance per rollout (and reuses it: it calls `reset(**row)` with the dataset
row before every rollout), exposes each public method other than `reset` and `get_reward` as a
tool the model may call, feeds a tool's return value (or the text of the exception it raised)
back to the model, and scores the rollout with `get_reward()`. Here:

* `reset(task_id=..., seed=..., split=..., **other_columns)` starts that instance and returns
  the task and the table as text, which TRL appends to the prompt's last user message.
* One tool per registered operation (`remove_duplicates`, `fill_missing`, ..., `finish`),
  generated from the operation registry with its parameters and docstring
  (`dataclean_env.training.tools`). A refused action raises `ValueError` with the server's
  reason (TRL counts it as a failed tool call; the table is unchanged), as does any call
  after the episode is over.
* `get_reward()` is the episode's score gain, final minus initial score (the sum of the
  OpenEnv step rewards); `reward="score"` makes it the final score itself.

Both drive a `protocol.EnvProtocol`: `DataCleaningToolEnv` the engine in this process
(`DataCleaningEnv`); `RemoteDataCleaningToolEnv` a server (local or a Space) through
`RemoteDataCleaningEnv`, over one `/ws` connection per instance, opened on the first reset
and kept.
TRL calls the factory without arguments, so pass a server's URL with `functools.partial`:

    GRPOTrainer(..., environment_factory=DataCleaningToolEnv)
    GRPOTrainer(..., environment_factory=partial(RemoteDataCleaningToolEnv, "http://127.0.0.1:7860"))

`tool_env_class(task_operations(task_ids))` builds a class with only the tools those tasks
allow (a shorter prompt than every operation's).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from dataclean_env.agents.prompt import query_lines
from dataclean_env.engine.step_memory import StepMemory
from dataclean_env.in_process import DataCleaningEnv
from dataclean_env.operations.claims import cleaning_operation_names
from dataclean_env.protocol import EnvProtocol
from dataclean_env.schemas import StepResult, graded
from dataclean_env.tasks import TaskRegistry, default_registry
from dataclean_env.training.tools import operation_tool

DEFAULT_URL = "http://127.0.0.1:7860"

RewardKind = Literal["improvement", "score"]


class CleaningToolEnv:
    """What every generated environment class shares: reset, reward, acting, rendering.

    It has no tools itself (see `tool_env_class`). Only `reset` and `get_reward` are public
    methods: TRL would offer any other public method to the model as a tool."""

    task_id = "easy_dedup_rename"  # used when the dataset row names no task
    split = "train"
    rows_shown = 5  # sample rows in each observation text (fewer: shorter tool responses)
    # One step memory for every rollout in this process: TRL makes an environment per
    # rollout, and the rollouts of a GRPO group replay the same steps from the same table.
    memory = StepMemory()

    def __init__(self, registry: TaskRegistry | None = None, reward: RewardKind = "improvement"):
        self._registry = registry
        self._reward = reward
        self._env: EnvProtocol | None = None
        self._last: StepResult | None = None
        self.initial_score = 0.0
        self.score = 0.0
        self.done = False
        self.tool_calls = 0
        self.refused = 0

    def reset(
        self,
        task_id: str | None = None,
        seed: int | None = None,
        split: str | None = None,
        **row: Any,
    ) -> str:
        """Start the episode the dataset row names (other columns, like `prompt`, are ignored)."""
        task_id = task_id or self.task_id
        env = self._environment()
        # The row's instance: its seed None is the task's default one, where the protocol's
        # None would replay the last row's seed (as the runner's Backend.reset does).
        env.seed = seed
        self._last = result = env.reset(None, None, split or self.split, task_id)
        self.initial_score = self.score = graded(result).total
        self.done = result.done
        self.tool_calls = self.refused = 0
        return "\n\n" + render(result, self.rows_shown)

    def get_reward(self) -> float:
        """The rollout's reward: score gain (default) or final score."""
        if self._reward == "score":
            return self.score
        return round(self.score - self.initial_score, 4)

    def _act(self, operation: str, parameters: dict[str, Any]) -> str:
        if self._last is None:
            raise ValueError("no episode: reset the environment first")
        if self.done:
            raise ValueError("the episode is over; no further operations are accepted")
        self.tool_calls += 1
        result = self._environment().step({"operation": operation, "parameters": parameters})
        error = result.info.get("error")
        if error:
            self.refused += 1
            raise ValueError(f"refused, the table is unchanged: {error['detail']}")
        self._last = result
        self.score, self.done = graded(result).total, result.done
        return render(result, self.rows_shown)

    def _environment(self) -> EnvProtocol:
        if self._env is None:
            self._env = self._open()
        return self._env

    def _open(self) -> EnvProtocol:
        registry = self._registry or default_registry()
        return DataCleaningEnv(registry.task_ids()[0], registry=registry, memory=self.memory)

    def _close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None

    def __enter__(self) -> CleaningToolEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()


class RemoteCleaningToolEnv(CleaningToolEnv):
    """The same, on a server over `/ws` (one connection per instance, kept across resets)."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        reward: RewardKind = "improvement",
        message_timeout_s: float = 60.0,
        token: str | None = None,
    ):
        super().__init__(reward=reward)
        self.base_url = base_url
        self._timeout = message_timeout_s
        self._token = token  # a submitter token: a public server's higher session quota

    def _open(self) -> EnvProtocol:
        # Imported here: openenv's client pulls in gradio (seconds), in-process users skip it.
        from dataclean_env.remote import RemoteDataCleaningEnv

        return RemoteDataCleaningEnv(
            self.base_url, message_timeout_s=self._timeout, token=self._token
        )


def tool_env_class(
    operations: Iterable[str] | None = None,
    *,
    remote: bool = False,
    name: str | None = None,
) -> type[CleaningToolEnv]:
    """An environment class with one tool method per operation (default: every operation).

    Aliases are left out: each is another spelling of an operation that is already a tool."""
    # By default the cleaning operations; the claim operations belong to the claim tasks.
    chosen = list(operations) if operations is not None else cleaning_operation_names()
    base = RemoteCleaningToolEnv if remote else CleaningToolEnv
    name = name or ("Remote" if remote else "") + "DataCleaningToolEnv"
    tools = {operation: operation_tool(operation) for operation in chosen}
    cls = type(name, (base,), {**tools, "__module__": __name__, "__doc__": base.__doc__})
    for tool in tools.values():
        tool.__qualname__ = f"{name}.{tool.__name__}"
    return cls


def task_operations(task_ids: Iterable[str], registry: TaskRegistry | None = None) -> list[str]:
    """The operations the tasks allow (their specs'), each once, in the order the tasks list
    them: the tools for training on those tasks."""
    specs = [(registry or default_registry()).spec(task_id) for task_id in task_ids]
    return list(dict.fromkeys(operation for spec in specs for operation in spec.operations))


def render(result: StepResult, rows_shown: int = 5) -> str:
    """The observation as the model reads it: what happened (at reset: the task; after a
    `query`, its result), the score, the table's columns and its first `rows_shown` sample
    rows."""
    observation = result.observation.model_dump(mode="json")
    score, done = graded(result).total, result.done
    columns = observation["columns"]
    rows = observation["shape"][0] if observation["shape"] else 0
    missing, dtypes = observation["missing_values"], observation["dtypes"]
    lines = [
        observation["message"],
        *query_lines(observation.get("query_result")),
        f"Score {score:.4f}. Step {observation['step']}, "
        f"{observation['steps_remaining']} steps left{'; the episode is over' if done else ''}.",
        f"Table: {rows} rows x {len(columns)} columns, "
        f"{observation['duplicate_count']} exact duplicate rows.",
        "Columns (name: dtype, missing cells): "
        + ", ".join(f"{c}: {dtypes.get(c, '?')}, {missing.get(c, 0)}" for c in columns),
        f"Rows from position {observation.get('sample_offset', 0)} (missing shown as NULL):",
        *(
            json.dumps(row, ensure_ascii=False, default=str)
            for row in observation["sample_rows"][:rows_shown]
        ),
    ]
    return "\n".join(line for line in lines if line)


DataCleaningToolEnv = tool_env_class(name="DataCleaningToolEnv")
RemoteDataCleaningToolEnv = tool_env_class(remote=True, name="RemoteDataCleaningToolEnv")
