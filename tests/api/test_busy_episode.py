"""A call on a busy episode (another call's step holds its lock, e.g. a long query in a worker
thread) waits for it off the event loop: the server answers everyone else meanwhile. Before,
a small table's state or step waited for the lock on the event loop, and a shared episode
(a task's default, which every id-less client uses) let one client stall the whole server.
Over a real uvicorn on 127.0.0.1, REST and /ws."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import httpx
import pytest
from websockets.sync.client import connect

from tests.web import LOCAL_PROXY, LiveServer

TASK = "easy_dedup_rename"
T = TypeVar("T")


class WatchedLock:
    """The episode's re-entrant lock, telling when a caller has to wait for it."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.waiting = threading.Event()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if self.lock.acquire(blocking=False):
            return True
        if not blocking:
            return False
        self.waiting.set()
        return self.lock.acquire(True, timeout)

    def release(self) -> None:
        self.lock.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


@pytest.fixture
def live() -> Iterator[LiveServer]:
    with LiveServer() as server:
        yield server


def answered_while_busy(live: LiveServer, episode: Any, call: Callable[[], T]) -> T:
    """What `call()` answers when it is sent while another step holds `episode`'s lock;
    checks on the way that the call waits for the lock and /health is answered meanwhile."""
    watched = episode.lock = WatchedLock()
    watched.acquire()  # another client's long step, running
    pool = ThreadPoolExecutor(1)
    try:
        pending = pool.submit(call)
        assert watched.waiting.wait(60), "the call never reached the episode"
        health = httpx.get(f"{live.url}/health", timeout=60)  # a stalled loop: ReadTimeout
        assert health.status_code == 200
        assert not pending.done()  # still waiting for the episode, off the event loop
    finally:
        watched.release()
        pool.shutdown(wait=True)
    return pending.result()


def test_a_rest_state_on_a_busy_episode_answers_the_committed_state_at_once(
    live: LiveServer,
) -> None:
    # Before, it waited for the lock in one of the pool's threads: a hundred such calls on
    # one busy episode took the pool, and every other client's threaded call waited seconds.
    assert httpx.post(f"{live.url}/reset/{TASK}", json={"episode_id": "busy"}).status_code == 200
    episode = live.app.state.store.get("busy")
    watched = episode.lock = WatchedLock()
    watched.acquire()  # another client's long step, running
    try:
        answer = httpx.get(f"{live.url}/state", params={"episode_id": "busy"}, timeout=60)
        assert not watched.waiting.is_set()
    finally:
        watched.release()
    assert answer.status_code == 200 and answer.json()["step_count"] == 0


def test_a_rest_step_on_a_busy_episode_waits_off_the_event_loop(live: LiveServer) -> None:
    assert httpx.post(f"{live.url}/reset/{TASK}", json={"episode_id": "busy"}).status_code == 200
    episode = live.app.state.store.get("busy")
    body = {"episode_id": "busy", "operation": "remove_duplicates"}
    answer = answered_while_busy(
        live, episode, lambda: httpx.post(f"{live.url}/step/{TASK}", json=body, timeout=120)
    )
    assert answer.status_code == 200 and answer.json()["info"]["step"] == 1


def test_a_ws_step_on_a_busy_episode_waits_off_the_event_loop(live: LiveServer) -> None:
    url = live.url.replace("http://", "ws://") + "/ws"
    with connect(url, open_timeout=60) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"
        (environment,) = [e for e in live.app.state.openenv._sessions.values() if e is not None]

        def step() -> dict[str, Any]:
            ws.send(json.dumps({"type": "step", "data": {"operation": "remove_duplicates"}}))
            frame: dict[str, Any] = json.loads(ws.recv(timeout=120))
            return frame

        frame = answered_while_busy(live, environment.episode, step)
    assert frame["type"] == "observation", frame
    assert frame["data"]["observation"]["step"] == 1


def test_a_ws_reset_joining_a_busy_issued_episode_waits_off_the_event_loop(
    live: LiveServer,
) -> None:
    # A leaderboard episode that another client is stepping, joined by a /ws reset naming it.
    assert httpx.post(f"{live.url}/reset/{TASK}", json={"episode_id": "busy"}).status_code == 200
    episode = live.app.state.store.get("busy")
    live.app.state.store.issue("lb-busy", lambda: episode)
    url = live.url.replace("http://", "ws://") + "/ws"
    with connect(url, open_timeout=60) as ws:

        def reset() -> dict[str, Any]:
            ws.send(json.dumps({"type": "reset", "data": {"episode_id": "lb-busy"}}))
            frame: dict[str, Any] = json.loads(ws.recv(timeout=120))
            return frame

        frame = answered_while_busy(live, episode, reset)
    assert frame["type"] == "observation", frame
    assert frame["data"]["observation"]["step"] == 0


def test_a_ws_state_on_a_busy_episode_answers_the_committed_state_at_once(
    live: LiveServer,
) -> None:
    # OpenEnv reads a /ws session's `state` on the event loop: it may not wait for a step that
    # another session (joined to the same issued episode) is running.
    url = live.url.replace("http://", "ws://") + "/ws"
    with connect(url, open_timeout=60) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"
        ws.send(json.dumps({"type": "step", "data": {"operation": "remove_duplicates"}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"
        (environment,) = [e for e in live.app.state.openenv._sessions.values() if e is not None]
        watched = environment.episode.lock = WatchedLock()
        watched.acquire()  # another client's long step, running
        try:
            ws.send(json.dumps({"type": "state"}))
            frame = json.loads(ws.recv(timeout=60))  # a stalled loop: TimeoutError
            assert not watched.waiting.is_set()
        finally:
            watched.release()
    assert frame["type"] == "state", frame
    assert frame["data"]["step_count"] == 1
    assert [h["operation"] for h in frame["data"]["history"]] == ["remove_duplicates"]


@pytest.fixture
def behind_local_proxy() -> Iterator[LiveServer]:
    with LiveServer(LOCAL_PROXY) as server:
        yield server


def test_slow_steps_wait_for_their_threads_in_lines_by_client(
    behind_local_proxy: LiveServer,
) -> None:
    # Every slow-step thread is held (steps waiting for busy episodes, one each: steps on one
    # episode take turns before they take a thread), and two more slow steps wait: each in
    # the line of its client, as the trusted proxy (127.0.0.1) names it.
    from dataclean_env.server.http.routes import episodes

    live = behind_local_proxy
    held = [f"held-{n}" for n in range(episodes.SLOW_THREADS + 1)]
    for name in [*held, "other"]:
        body = {"episode_id": name, "seed": 0}
        assert httpx.post(f"{live.url}/reset/crm", json=body).status_code == 200
    locks = []
    for name in held:
        watched = live.app.state.store.get(name).lock = WatchedLock()
        watched.acquire()
        locks.append(watched)
    slots = episodes._slow_slots
    query = {"operation": "query", "parameters": {"sql": "SELECT 1"}}

    def step(episode: str, client: str) -> int:
        response = httpx.post(
            f"{live.url}/step/crm",
            json={"episode_id": episode, **query},
            headers={"X-Forwarded-For": client},
            timeout=120,
        )
        return response.status_code

    calls = [(name, "10.0.0.1") for name in held] + [("other", "10.0.0.2")]
    pool = ThreadPoolExecutor(len(calls))
    try:
        answers = [pool.submit(step, *call) for call in calls[:-1]]
        for _ in range(600):  # the threads are taken and one step waits (60 s at most)
            if slots.held == episodes.SLOW_THREADS and slots.waiting():
                break
            threading.Event().wait(0.1)
        answers.append(pool.submit(step, *calls[-1]))
        for _ in range(600):
            if len(slots.waiting()) == 2:
                break
            threading.Event().wait(0.1)
        assert slots.waiting() == {"10.0.0.1": 1, "10.0.0.2": 1}
    finally:
        for watched in locks:
            watched.release()
        statuses = [answer.result() for answer in answers]
        pool.shutdown(wait=True)
    assert statuses == [200] * len(calls)


def test_a_ws_client_that_leaves_before_its_answer_leaves_no_error_in_the_log(
    live: LiveServer,
) -> None:
    # The answer's send fails (the client is gone); OpenEnv then sends an error frame, which
    # failed too and reached uvicorn as "Exception in ASGI application".
    errors: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = errors.append  # type: ignore[method-assign]
    logging.getLogger("uvicorn.error").addHandler(handler)
    try:
        url = live.url.replace("http://", "ws://") + "/ws"
        with connect(url, open_timeout=60) as ws:
            ws.send(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
            assert json.loads(ws.recv(timeout=60))["type"] == "observation"
            (environment,) = [e for e in live.app.state.openenv._sessions.values() if e is not None]
            watched = environment.episode.lock = WatchedLock()
            watched.acquire()  # the step waits, so the client is gone before its answer
            try:
                ws.send(json.dumps({"type": "step", "data": {"operation": "remove_duplicates"}}))
                assert watched.waiting.wait(60)
                ws.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                ws.socket.close()  # an abort (RST), not a closing handshake
            finally:
                watched.release()
        for _ in range(600):  # the session ends once the server sees the socket gone
            if not any(e is not None for e in live.app.state.openenv._sessions.values()):
                break
            threading.Event().wait(0.1)
        assert httpx.get(f"{live.url}/health", timeout=60).status_code == 200
    finally:
        logging.getLogger("uvicorn.error").removeHandler(handler)
    assert [e.getMessage() for e in errors] == []


def count_arrivals(store: Any, method: str) -> threading.Semaphore:
    """A semaphore released each time `store.<method>` has found an episode: the call goes
    on to wait for that episode at once (no await), so an arrival is a caller waiting."""
    arrived = threading.Semaphore(0)
    found_by = getattr(store, method)

    def counted(*args: Any) -> Any:
        found = found_by(*args)
        arrived.release()
        return found

    setattr(store, method, counted)
    return arrived


def test_a_flood_of_steps_on_a_busy_episode_holds_no_threads_of_others(live: LiveServer) -> None:
    # Before, each step on a busy episode waited for its lock in one of the pool's threads:
    # more of them than the pool has threads (40) took every thread, and another client's
    # threaded call (here the leaderboard) waited until the episode was free.
    assert httpx.post(f"{live.url}/reset/{TASK}", json={"episode_id": "busy"}).status_code == 200
    store = live.app.state.store
    episode = store.get("busy")
    max_steps = episode.spec.max_steps
    arrived = count_arrivals(store, "find")
    watched = episode.lock = WatchedLock()
    watched.acquire()  # another client's long step, running
    flood = 48
    body = {"episode_id": "busy", "operation": "validate_schema"}
    pool = ThreadPoolExecutor(flood)
    try:
        steps = [
            pool.submit(httpx.post, f"{live.url}/step/{TASK}", json=body, timeout=120)
            for _ in range(flood)
        ]
        for _ in range(flood):
            assert arrived.acquire(timeout=60), "a step never reached the episode"
        board = httpx.get(f"{live.url}/leaderboard", timeout=30)  # no thread: ReadTimeout
        assert board.status_code == 200
        assert not any(step.done() for step in steps)  # all still waiting for the episode
    finally:
        watched.release()
        answers = [step.result() for step in steps]
        pool.shutdown(wait=True)
    codes = sorted(a.json().get("code", "") for a in answers if a.status_code != 200)
    assert [a.status_code for a in answers].count(200) == max_steps
    assert codes == ["EPISODE_FINISHED"] * (flood - max_steps)


class CountedLock(WatchedLock):
    """A `WatchedLock` that also counts the callers that had to wait for it."""

    def __init__(self) -> None:
        super().__init__()
        self.waiters = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if self.lock.acquire(blocking=False):
            return True
        if not blocking:
            return False
        self.waiters += 1  # one call at a time waits here: the one whose turn it is
        self.waiting.set()
        return self.lock.acquire(True, timeout)


def test_a_flood_of_page_reads_on_a_busy_episode_holds_no_threads_of_others(
    live: LiveServer,
) -> None:
    # Before, the page's table read and heuristic waited for the episode's lock in the pool's
    # threads: more of them than the pool has threads (40) took every thread, and another
    # client's threaded call (the leaderboard) waited until the episode was free.
    assert httpx.post(f"{live.url}/reset/{TASK}", json={"episode_id": "busy"}).status_code == 200
    store = live.app.state.store
    episode = store.get("busy")
    arrived = count_arrivals(store, "get")
    watched = episode.lock = CountedLock()
    watched.acquire()  # another client's long step, running
    flood = 48
    pool = ThreadPoolExecutor(flood)
    table, heuristic = f"{live.url}/episodes/busy/table", f"{live.url}/episodes/busy/heuristic"
    try:
        reads = [
            pool.submit(httpx.get, table, timeout=120)
            if n % 2
            else pool.submit(httpx.post, heuristic, timeout=120)
            for n in range(flood)
        ]
        for _ in range(flood):
            assert arrived.acquire(timeout=60), "a read never reached the episode"
        board = httpx.get(f"{live.url}/leaderboard", timeout=30)  # no thread: ReadTimeout
        assert board.status_code == 200
        assert watched.waiting.wait(60)
        assert watched.waiters == 1  # one read waits in a thread; the others take turns
        assert not any(read.done() for read in reads)  # all still waiting for the episode
    finally:
        watched.release()
        answers = [read.result() for read in reads]
        pool.shutdown(wait=True)
    assert [a.status_code for a in answers] == [200] * flood
    assert {a.json()["step"] for a in answers[1::2]} == {0}


def test_the_leaderboard_does_not_wait_for_a_step_on_a_ranked_episode(live: LiveServer) -> None:
    # Its sweep looks at every live ranked episode; before, it waited in a thread for the lock
    # of one that a step held (up to a step's time), and so did GET /leaderboard.
    body = {"name": "tester", "model": "m", "episodes": 1}
    run = httpx.post(f"{live.url}/leaderboard/runs", json=body, timeout=60).json()
    (played,) = [e["episode_id"] for e in run["episodes"]]
    assert httpx.post(f"{live.url}/reset", json={"episode_id": played}).status_code == 200
    watched = live.app.state.store.get(played).lock = WatchedLock()
    watched.acquire()  # its agent's long step, running
    try:
        board = httpx.get(f"{live.url}/leaderboard", timeout=30)  # waiting: ReadTimeout
        status = httpx.get(f"{live.url}/leaderboard/runs/{run['run_id']}", timeout=30)
        assert not watched.waiting.is_set()
    finally:
        watched.release()
    assert board.status_code == 200 and status.status_code == 200
    assert status.json()["episodes"][0]["status"] == "open"


def test_a_step_that_ends_a_ranked_episode_records_it_off_the_event_loop(
    live: LiveServer,
) -> None:
    # Recording the end replays the reference plan and commits to the database: on the event
    # loop (a small table's step runs there), it stalled every other client meanwhile.
    from dataclean_env.server.http.routes.episodes import INLINE_CELLS

    board = live.app.state.leaderboard
    on_loop: list[bool] = []
    record = board._on_end

    def on_end(episode: Any) -> None:
        try:
            asyncio.get_running_loop()
            on_loop.append(True)
        except RuntimeError:  # no event loop runs in this thread: a worker thread
            on_loop.append(False)
        record(episode)

    board._on_end = on_end  # read when the episode is first joined
    body = {"name": "tester", "model": "m", "episodes": 1}
    run = httpx.post(f"{live.url}/leaderboard/runs", json=body, timeout=60).json()
    (played,) = [e["episode_id"] for e in run["episodes"]]
    assert httpx.post(f"{live.url}/reset", json={"episode_id": played}).status_code == 200
    assert live.app.state.store.get(played).cells <= INLINE_CELLS  # a step that could run inline
    answer = httpx.post(
        f"{live.url}/step", json={"episode_id": played, "operation": "finish"}, timeout=60
    )
    assert answer.status_code == 200 and answer.json()["done"]
    assert on_loop == [False]
