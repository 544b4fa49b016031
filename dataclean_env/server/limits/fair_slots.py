"""A few slots for slow work, handed out in turns by client.

A plain limiter serves waiters first come, first served: a client that sends forty slow
steps at once (queries that each run to the step time limit) holds everyone else's step
behind all forty. Here each client waits in a line of its own, and a freed slot goes to the
next client in turn, so another client waits for at most one round of the others, whatever
one client has queued. Runs on the event loop (not thread-safe, and needs none).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class FairSlots:
    def __init__(self, capacity: int):
        self.capacity = capacity
        self.held = 0
        # Each waiting client's line, in turn order: the first is served next, then goes last.
        self._lines: dict[str, deque[asyncio.Future[None]]] = {}

    def waiting(self) -> dict[str, int]:
        """Each waiting client's number of waiting requests, in turn order."""
        return {client: len(line) for client, line in self._lines.items()}

    @asynccontextmanager
    async def slot(self, client: str) -> AsyncIterator[None]:
        if self.held < self.capacity and not self._lines:
            self.held += 1
        else:
            granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._lines.setdefault(client, deque()).append(granted)
            try:
                await granted  # the slot is handed over held: `held` does not change
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():
                    self._hand_on()  # handed a slot as it gave up: the next one has it
                else:
                    self._leave(client, granted)
                raise
        try:
            yield
        finally:
            self._hand_on()

    def _hand_on(self) -> None:
        """Give a freed slot to the next waiting client in turn, or free it."""
        while self._lines:
            client = next(iter(self._lines))
            line = self._lines.pop(client)
            granted = line.popleft()
            if line:
                self._lines[client] = line  # its next one waits for its next turn
            if not granted.done():  # a waiter cancelled meanwhile is passed over
                granted.set_result(None)
                return
        self.held -= 1

    def _leave(self, client: str, granted: asyncio.Future[None]) -> None:
        line = self._lines.get(client)
        if line is not None and granted in line:
            line.remove(granted)
            if not line:
                del self._lines[client]
