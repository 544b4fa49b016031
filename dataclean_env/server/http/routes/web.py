"""The browser page and the few read-only helpers it needs beside the REST API.

* `GET /web`, `GET /ui`: the page (`static/index.html`); its assets at `/static/{file}`.
* `GET /episodes/{episode_id}/table`: a page of the episode's current table with the dirty
  value of every changed cell and per-column statistics (viewer only; refused for blind
  episodes, `reward_visibility.refuse_view`).
* `POST /episodes/{episode_id}/heuristic`: the built-in heuristic agent's next action for
  the episode (not applied: the page sends it as an ordinary step, so it is validated and
  logged like any other). One agent per live episode, held in a weak map keyed by the
  episode object, so it lives exactly as long as the episode does in the bounded store.
* `GET /tasks/{task_id}/instances`: seeds of a generated family (cleaning or claims) with
  their difficulty, so a visitor can ask for a "hard eval instance" (difficulty is drawn
  per instance).
"""

from __future__ import annotations

import re
import threading
import weakref
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse
from starlette.concurrency import run_in_threadpool

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.engine.episode import Episode
from dataclean_env.engine.opening import opening_of
from dataclean_env.errors import EpisodeFinished, NoInstances
from dataclean_env.rate_limit import client_key
from dataclean_env.schemas import Action
from dataclean_env.server.http.deps import get_registry, get_store
from dataclean_env.server.http.routes.episodes import run_sized
from dataclean_env.server.http.table_view import MAX_PAGE, table_page
from dataclean_env.server.store.episode_store import EpisodeStore
from dataclean_env.server.store.reward_visibility import refuse_view
from dataclean_env.settings import PACKAGE_DIR, PROJECT_ROOT
from dataclean_env.tasks import TaskRegistry
from dataclean_env.tasks.claim_families import GENERATED as CLAIMS_FAMILIES
from dataclean_env.tasks.generated import FAMILIES, predicted_difficulty

router = APIRouter(tags=["web page"])
Store = Annotated[EpisodeStore, Depends(get_store)]
Registry = Annotated[TaskRegistry, Depends(get_registry)]

_ASSET = re.compile(r"^[A-Za-z0-9_-]+\.(css|js|png|svg|ico)$")
# The page may talk to this server only; nothing it shows can run as script.
_PAGE_HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        # A Space shows its app in a frame of huggingface.co; no other site may frame it.
        "frame-ancestors 'self' https://huggingface.co"
    ),
    "X-Content-Type-Options": "nosniff",
}
MAX_SEED_SCAN = 1000
MAX_PASSED_OVER = 10  # refused actions the helper passes over before it offers finish


def static_dir() -> Path:
    """`static/` of a checkout, else the copy the wheel ships inside the package."""
    checkout = PROJECT_ROOT / "static"
    return checkout if (checkout / "index.html").exists() else PACKAGE_DIR / "static"


def _page() -> FileResponse:
    return FileResponse(static_dir() / "index.html", media_type="text/html", headers=_PAGE_HEADERS)


@router.get("/web", summary="The web page", response_class=HTMLResponse)
async def web() -> FileResponse:
    """The page: pick a task, play an episode of your own, watch the heuristic, leaderboard."""
    return _page()


@router.get("/ui", summary="The web page (alias)", response_class=HTMLResponse)
async def ui() -> FileResponse:
    return _page()


@router.get("/web/", include_in_schema=False)
@router.get("/ui/", include_in_schema=False)
async def page_with_slash() -> FileResponse:
    return _page()


@router.get("/static/{name}", include_in_schema=False)
async def asset(name: str) -> FileResponse:
    path = static_dir() / name
    if not _ASSET.match(name) or not path.is_file():
        raise HTTPException(404, f"no asset {name!r}")
    return FileResponse(path, headers={"Cache-Control": "no-cache"})


# ── viewer ────────────────────────────────────────────────────────────────


class PageState:
    """What the page's helpers keep per live episode: its heuristic agent. A weak map keyed
    by the Episode object, so an entry lives exactly as long as its episode does in the
    bounded store (a reset with the same id is a new Episode, hence a fresh agent)."""

    def __init__(self) -> None:
        self.agents: weakref.WeakKeyDictionary[Episode, HeuristicAgent] = (
            weakref.WeakKeyDictionary()
        )
        self.lock = threading.Lock()  # the map is touched from the thread pool

    def agent(self, episode: Episode) -> HeuristicAgent:
        with self.lock:
            return self.agents.setdefault(episode, HeuristicAgent())


async def get_page_state(request: Request) -> PageState:
    # Created on first use, on the event loop (so once), and held by the app like the store.
    if not hasattr(request.app.state, "page"):
        request.app.state.page = PageState()
    page: PageState = request.app.state.page
    return page


Page = Annotated[PageState, Depends(get_page_state)]


def _key(episode: Episode) -> str | None:
    protected = sorted(episode.spec.protected_columns)
    return protected[0] if len(protected) == 1 else None


@router.get("/episodes/{episode_id}/table")
async def episode_table(
    episode_id: str,
    store: Store,
    request: Request,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
) -> dict[str, Any]:
    """Rows `[offset, offset + limit)` of the episode's current table (missing cells are
    null), each with `changed` (column -> the cell's value in the dirty table, for cells a
    step changed), and per column its dtype, missing and distinct counts. Never gold.

    A viewer for people and training loops; refused (403 VIEW_REFUSED) for blind
    leaderboard episodes, whose agents must page with `show_rows`, which costs a step."""
    episode = await run_in_threadpool(store.get, episode_id, None, client_key(request.scope))
    refuse_view(episode)

    def work() -> dict[str, Any]:
        dirty = opening_of(episode.task).snapshot
        with episode.lock:
            current, step, done = episode.snapshot, episode.step_count, episode.done
        page = table_page(current, dirty, _key(episode), offset, limit)
        return {
            "episode_id": episode_id,
            "task_id": episode.spec.task_id,
            "step": step,
            "done": done,
            **page,
        }

    # Takes the episode's turn as a step does: a read waiting for a busy episode holds no
    # thread, so a flood of them cannot take the pool's threads from everyone else. Then in
    # a thread: its column statistics take longer than a step on a small table.
    return await run_sized(work, episode.cells, waits=True, episode=episode)


def offered_action(agent: HeuristicAgent, episode: Episode) -> dict[str, Any]:
    """The agent's next action that the episode would take, else `finish` (always taken)."""
    observation = episode.observation().model_dump(mode="json")
    for _ in range(MAX_PASSED_OVER + 1):
        action = agent.act(observation)
        try:
            candidate = Action(**action)
        except ValueError:  # not even an action: pass it over like a refused one
            continue
        if episode.refusal(candidate) is None:
            return action
    return {"operation": "finish", "parameters": {}}


@router.post("/episodes/{episode_id}/heuristic")
async def heuristic_action(
    episode_id: str, store: Store, cache: Page, request: Request
) -> dict[str, Any]:
    """The built-in heuristic agent's next action for this episode, from its current
    observation (not applied: send it to `/step`). The agent is kept per episode, so
    asking after each step plays its whole policy; a reset starts a fresh agent.

    Open to blind episodes too (the page plays leaderboard runs with it): the agent reads
    only the observation every door shows, which holds no score, and answers only an
    action, so it tells nothing a client could not compute with the same public agent.

    Never an action the episode would refuse: one the table refuses (a type conversion
    the values do not allow yet) is passed over for the agent's next, as the runner's
    agent moves on after a refusal, so the page's run takes the runner's steps."""
    episode = await run_in_threadpool(store.get, episode_id, None, client_key(request.scope))

    def work() -> dict[str, Any]:
        with episode.lock:
            if episode.done:
                raise EpisodeFinished(f"episode {episode_id!r} is finished; reset to play again")
            action = offered_action(cache.agent(episode), episode)
        return {"episode_id": episode_id, "agent": HeuristicAgent.name, "action": action}

    # In the episode's turn, like the table, then in a thread: it may try up to
    # MAX_PASSED_OVER + 1 steps, too long for the event loop even on a small table.
    return await run_sized(work, episode.cells, waits=True, episode=episode)


# ── generated instances ───────────────────────────────────────────────────


@router.get("/tasks/{task_id}/instances")
async def instances(
    task_id: str,
    registry: Registry,
    split: Literal["train", "eval", "test"] = "train",
    difficulty: Literal["easy", "medium", "hard"] | None = None,
    start: Annotated[int, Query(ge=0, lt=2**62)] = 0,
    limit: Annotated[int, Query(ge=1, le=50)] = 10,
) -> dict[str, Any]:
    """Seeds from `start` on of a generated family, cleaning or claims, with their difficulty
    (only those of `difficulty` when given; at most 1000 seeds are looked at). Every such
    generator draws its difficulty first, so `predicted_difficulty` serves both."""
    registry.spec(task_id)  # 404 for an unknown task
    if task_id not in FAMILIES and task_id not in CLAIMS_FAMILIES:
        raise NoInstances(f"{task_id!r} is not a generated family; it has one instance")
    found = []
    for seed in range(start, start + MAX_SEED_SCAN):
        level = predicted_difficulty(task_id, split, seed)
        if difficulty in (None, level):
            found.append({"seed": seed, "difficulty": level})
            if len(found) == limit:
                break
    return {"task_id": task_id, "split": split, "instances": found}
