"""One episode as MCP tools: OpenEnv's `MCPEnvironment` over a `DataCleaningEnvironment`.

Each MCP session owns one `McpEpisode`: its own FastMCP server whose tools are
`reset_episode`, `episode_state` and one tool per operation of the registry (the schema is the
operation's parameter model). The tools the session may see are the operations the current
task allows (`visible_tools`); before the first reset, only `reset_episode` and
`episode_state`. OpenEnv reserves the bare names `reset` and `state` for its own protocol,
hence the longer ones.

A tool's result is the observation as /ws sends it (OpenEnv's `serialize_observation` of the
environment's observation, so blind episodes hide their figures here too); a refused step is a
tool error whose text is `{"code": ..., "message": ...}` with the REST codes.

When a call changes the tools a session may see (a reset to another task), the session is
sent `notifications/tools/list_changed` before the call's result, on the call's own stream,
so a client that caches its tool list (most do) lists them again.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any, Literal

import anyio
from pydantic import PrivateAttr

from dataclean_env.errors import EnvError
from dataclean_env.models import CleaningAction
from dataclean_env.openenv_light import skip_package_inits
from dataclean_env.operations import registry as operations
from dataclean_env.server.limits.session_quota import SessionQuota
from dataclean_env.server.openenv.data_cleaning_environment import DataCleaningEnvironment

skip_package_inits()

from fastmcp import FastMCP  # noqa: E402
from fastmcp.exceptions import ToolError  # noqa: E402
from fastmcp.server.dependencies import get_context  # noqa: E402
from fastmcp.server.providers import Provider  # noqa: E402
from fastmcp.tools import Tool  # noqa: E402
from fastmcp.tools.base import ToolResult  # noqa: E402
from fastmcp.tools.function_tool import FunctionTool  # noqa: E402
from mcp.types import ServerNotification, TextContent, ToolListChangedNotification  # noqa: E402
from openenv.core.env_server.mcp_environment import MCPEnvironment  # noqa: E402
from openenv.core.env_server.serialization import serialize_observation  # noqa: E402

CONTROL_TOOLS = ("reset_episode", "episode_state")

INSTRUCTIONS = (
    "Clean a dirty table one operation per tool call; every call is scored cell by cell "
    "against a hidden clean table. Start with reset_episode (a task_id and a seed), read the "
    "observation (columns, dtypes, missing values, sample rows, the task's rule card in "
    "task_description), call one operation tool per step, and end with finish. A refused "
    "call is an error with a code and changes nothing."
)


def refusal(code: str, message: str) -> ToolError:
    """A tool error carrying the same machine-readable code REST answers with."""
    return ToolError(json.dumps({"code": code, "message": message}))


def tool_result(payload: dict[str, Any]) -> ToolResult:
    return ToolResult(
        content=[TextContent(type="text", text=json.dumps(payload))], structured_content=payload
    )


class OperationTool(Tool):
    """One operation as a tool: its arguments are the operation's parameters."""

    _episode: Any = PrivateAttr(default=None)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        episode: McpEpisode = self._episode
        return await episode.play(self.name, arguments)


async def announce_tools_changed() -> None:
    """Tell the calling session its tools changed. Sent as part of the current call (its
    related request), so it reaches the client before the call's result, on the stream the
    client is already reading: no separate GET stream is needed."""
    context = get_context()
    await context.session.send_notification(
        ServerNotification(ToolListChangedNotification()),
        related_request_id=context.request_id,
    )


def _description(operation: operations.Operation) -> str:
    ends = " Ends the episode." if operation.ends_episode else ""
    return f"{operation.description}{ends} Arguments: the operation's parameters."


# The episode a control tool runs for (`EpisodeTool`). The control tools' functions are
# module-level: FastMCP caches per function (schemas, wrappers: LRU caches of 5000), so a
# closure per episode kept up to thousands of ended episodes reachable.
_EPISODE: ContextVar[McpEpisode] = ContextVar("dce_mcp_episode")


async def reset_episode(
    task_id: str = "",
    seed: int | None = None,
    split: Literal["train", "eval", "test"] = "train",
    reward_mode: Literal["delta", "absolute", "hidden"] = "delta",
) -> ToolResult:
    """Start a new episode (and forget the previous one). task_id: one of the tasks
    (fixed tasks, generated families such as `crm`, custom folders); seed: the
    instance (same seed, same table); split: train, eval or test (generated families);
    reward_mode: delta (the change in score per step), absolute (the score), hidden
    (nothing until the end). Returns the first observation; the operation tools the
    task allows are listed after this call."""
    return await _EPISODE.get().start(task_id, seed, split, reward_mode)


async def episode_state() -> dict[str, Any]:
    """The episode's state: id, task, step count, done, the score so far (hidden in a
    blind episode) and the actions taken."""
    state: dict[str, Any] = _EPISODE.get().env.state.model_dump()
    return state


class EpisodeTool(FunctionTool):
    """A control tool (`reset_episode`, `episode_state`) of one episode."""

    _episode: Any = PrivateAttr(default=None)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        token = _EPISODE.set(self._episode)
        try:
            return await super().run(arguments)
        finally:
            _EPISODE.reset(token)


def control_tools(episode: McpEpisode) -> list[EpisodeTool]:
    tools: list[EpisodeTool] = []
    for function in (reset_episode, episode_state):
        made = EpisodeTool.from_function(function)
        assert isinstance(made, EpisodeTool)  # from_function builds `cls`
        made._episode = episode
        tools.append(made)
    properties = copy.deepcopy(tools[0].parameters)
    properties["properties"]["task_id"]["default"] = episode.first_task
    tools[0].parameters = properties
    return tools


class McpEpisode(MCPEnvironment):
    """An MCP session's episode: the environment REST-less clients play through tools."""

    def __init__(self, env: DataCleaningEnvironment):
        self.env = env
        server = FastMCP("data-cleaning-episode", instructions=INSTRUCTIONS)
        for name in operations.operation_names():
            operation = operations.get_operation(name)
            tool = OperationTool(
                name=name,
                description=_description(operation),
                parameters=operation.params_model.model_json_schema(),
            )
            tool._episode = self
            server.add_tool(tool)
        self.first_task = next(iter(env.registry.task_ids()))
        super().__init__(server)
        for control in control_tools(self):
            server.add_tool(control)

    # ── the tools' bodies ────────────────────────────────────────────────
    async def start(
        self, task_id: str, seed: int | None, split: str, reward_mode: str
    ) -> ToolResult:
        before = self.allowed()
        try:
            observation = await self.env.reset_async(
                seed=seed, task_id=task_id or self.first_task, split=split, reward_mode=reward_mode
            )
        except EnvError as error:
            raise refusal(error.code, error.detail) from error
        if self.allowed() != before:
            await announce_tools_changed()
        return tool_result(serialize_observation(observation))

    async def play(self, operation: str, arguments: dict[str, Any]) -> ToolResult:
        if self.env.episode is None:
            raise refusal("NO_EPISODE", "call reset_episode first")
        observation = await self.env.step_async(
            CleaningAction(operation=operation, parameters=arguments)
        )
        error = (observation.info or {}).get("error")
        if error:
            raise refusal(error["code"], error.get("detail", ""))
        return tool_result(serialize_observation(observation))

    def allowed(self) -> set[str]:
        """The tool names this session may call now."""
        episode = self.env.episode
        names = set(CONTROL_TOOLS)
        if episode is not None:
            names |= {operations.canonical_name(name) for name in episode.spec.operations}
        return names

    async def visible_tools(self) -> list[Tool]:
        allowed = self.allowed()
        return [tool for tool in await self.mcp_server.list_tools() if tool.name in allowed]

    async def visible_tool(self, name: str) -> Tool | None:
        if name not in self.allowed():
            return None
        tool: Tool | None = await self.mcp_server.get_tool(name)
        return tool

    # ── OpenEnv's Environment interface (in-process use) ─────────────────
    def reset(self, seed: int | None = None, episode_id: str | None = None, **options: Any) -> Any:
        return self.env.reset(seed=seed, episode_id=episode_id, **options)

    def _step_impl(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
        return self.env.step(action)

    @property
    def state(self) -> Any:
        return self.env.state


class EpisodeSessions:
    """MCP session id -> (OpenEnv session id, McpEpisode), made on a session's first use.

    An entry lives as long as its MCP session: `end` removes it when the session ends by any
    path (a DELETE, the transport's idle timeout, a crash, shutdown: `watch_session_ends`),
    with its OpenEnv session. An OpenEnv session that ends first (expired without a call)
    takes its episode with it (`openenv_ended`); the entry stays, episode-less, until the MCP
    session ends, so that a call is told SESSION_EXPIRED."""

    def __init__(self, openenv_server: Any, quota: SessionQuota):
        self.server, self.quota = openenv_server, quota
        self._episodes: dict[str, tuple[str, McpEpisode | None]] = {}
        self._mcp_of: dict[str, str] = {}  # OpenEnv session id -> MCP session id
        self._live: dict[str, str] = {}  # MCP sessions opened and not ended -> quota holder
        self._lock = asyncio.Lock()
        openenv_server.on_end.append(self.openenv_ended)

    def opened(self, mcp_session: str, holder: str) -> None:
        """An MCP session was established (its initialize was answered with its id); it
        holds a place of `holder`'s session quota (SessionQuota's key) until it ends."""
        self._live[mcp_session] = holder

    async def end(self, mcp_session: str) -> None:
        """The MCP session ended: its entry, its OpenEnv session and its client's quota
        place go (idempotent)."""
        holder = self._live.pop(mcp_session, None)
        bound = self._episodes.pop(mcp_session, None)  # before any await: gone at once
        if holder is not None:
            await self.quota.release_async(holder)
        if bound is None:
            return
        openenv_id = bound[0]
        self._mcp_of.pop(openenv_id, None)
        if openenv_id in self.server._sessions:
            await self.server._destroy_session(openenv_id)

    def openenv_ended(self, openenv_id: str) -> None:
        """SessionServer's word that an OpenEnv session ends: an MCP session's episode goes."""
        mcp_session = self._mcp_of.pop(openenv_id, None)
        if mcp_session is not None and mcp_session in self._episodes:
            self._episodes[mcp_session] = (openenv_id, None)

    def __len__(self) -> int:
        return len(self._episodes)

    async def current(self) -> McpEpisode:
        mcp_session = get_context().session_id
        async with self._lock:
            bound = self._episodes.get(mcp_session)
            if bound is None:
                if mcp_session not in self._live:
                    raise refusal("SESSION_ENDED", "this MCP session has ended")
                try:
                    openenv_id, env = await self.server._create_session()
                except Exception as error:  # capacity or factory: the session server's words
                    raise refusal("TOO_MANY_SESSIONS", str(error)) from error
                if mcp_session not in self._live:  # ended while its episode was made
                    await self.server._destroy_session(openenv_id)
                    raise refusal("SESSION_ENDED", "this MCP session has ended")
                bound = self._episodes[mcp_session] = (openenv_id, McpEpisode(env))
                self._mcp_of[openenv_id] = mcp_session
        openenv_id, episode = bound
        if episode is None or openenv_id not in self.server._sessions:  # expired without use
            self.openenv_ended(openenv_id)
            raise refusal(
                "SESSION_EXPIRED", "this MCP session's episode expired; open a new session"
            )
        self.server._update_session_activity(openenv_id)
        return episode


class EpisodeTools(Provider):
    """The calling session's tools: its episode's `reset_episode`, `episode_state` and the
    operations the current task allows."""

    def __init__(self, sessions: EpisodeSessions):
        super().__init__()
        self.sessions = sessions

    async def _list_tools(self) -> Sequence[Tool]:
        return await (await self.sessions.current()).visible_tools()

    async def _get_tool(self, name: str, version: Any = None) -> Tool | None:
        return await (await self.sessions.current()).visible_tool(name)


def tool_server(sessions: EpisodeSessions) -> FastMCP:
    """The app-wide MCP server: each session sees and plays its own episode's tools."""
    return FastMCP(
        "data-cleaning-openenv", instructions=INSTRUCTIONS, providers=[EpisodeTools(sessions)]
    )


def watch_session_ends(http_app: Any, sessions: EpisodeSessions, idle_seconds: float) -> None:
    """Tell `sessions` of every end of an MCP session, and end idle ones after
    `idle_seconds` (the detached-session time) rather than the SDK's 30 minutes.

    Every end of a session (a DELETE, the idle timeout, a crash, the manager's shutdown)
    passes the session manager's `_discard_session` (mcp's StreamableHTTPSessionManager,
    started by the app's lifespan): wrapped here, on the one manager of `http_app`."""
    from fastmcp.server.http import StreamableHTTPASGIApp

    (manager,) = [
        route.endpoint.session_manager
        for route in http_app.routes
        if isinstance(getattr(route, "endpoint", None), StreamableHTTPASGIApp)
    ]
    manager.session_idle_timeout = idle_seconds
    discard = manager._discard_session

    async def discard_session(session_id: str, transport: Any) -> None:
        with anyio.CancelScope(shield=True):  # at shutdown, in a cancelled task
            await sessions.end(session_id)
        await discard(session_id, transport)

    manager._discard_session = discard_session
