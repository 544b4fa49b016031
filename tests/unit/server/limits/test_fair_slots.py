"""Slow steps take turns by client: one client's many waiting steps wait behind each other,
not in front of everyone else's (a client with 40 queued queries held another client's
`SELECT 1` for 36 s). Driven on one event loop, so every order is exact."""

from __future__ import annotations

import asyncio

import pytest

from dataclean_env.server.limits.fair_slots import FairSlots

pytestmark = pytest.mark.unit


async def _hold(slots: FairSlots, client: str, order: list[str], release: asyncio.Event) -> None:
    async with slots.slot(client):
        order.append(client)
        await release.wait()


async def _queue(slots: FairSlots, clients: list[str]) -> tuple[list[str], list[asyncio.Event]]:
    """Start each client's request in turn while every slot is held; then release one
    holder at a time and return the order in which they got a slot."""
    order: list[str] = []
    releases = [asyncio.Event() for _ in clients]
    tasks = []
    for client, release in zip(clients, releases, strict=True):
        tasks.append(asyncio.create_task(_hold(slots, client, order, release)))
        await asyncio.sleep(0)  # it takes a slot or joins the queue, in this order
    for release in releases:
        release.set()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)
    return order, releases


def test_waiting_clients_take_turns() -> None:
    slots = FairSlots(capacity=1)
    order, _ = asyncio.run(_queue(slots, ["a", "a", "a", "a", "b", "c", "b"]))
    # "a" held the slot and queued three more before "b" and "c" came: they go in turns.
    assert order == ["a", "a", "b", "c", "a", "b", "a"]


def test_a_free_slot_is_taken_at_once() -> None:
    slots = FairSlots(capacity=2)
    order, _ = asyncio.run(_queue(slots, ["a", "b", "a"]))
    assert order == ["a", "b", "a"]
    assert slots.held == 0


async def _one_of_two_waiters_quits(after_its_grant: bool) -> list[str]:
    """The holder "a" and the waiters "b", "c" of one slot; "b" gives up while it waits, or once the
    slot is granted to it and before it runs. Who ran, in order."""
    slots = FairSlots(capacity=1)
    order: list[str] = []
    release = asyncio.Event()
    holder = asyncio.create_task(_hold(slots, "a", order, release))
    await asyncio.sleep(0)
    quitter = asyncio.create_task(_hold(slots, "b", order, asyncio.Event()))
    waiter = asyncio.create_task(_hold(slots, "c", order, release))
    await asyncio.sleep(0)
    if after_its_grant:
        release.set()
        await asyncio.sleep(0)  # "a" ends: its slot goes to "b", which has not yet run
        quitter.cancel()
    else:
        quitter.cancel()  # a client that disconnected while it waited
        await asyncio.sleep(0)
        release.set()
    await asyncio.gather(holder, waiter)
    assert slots.held == 0 and slots.waiting() == {}
    return order


def test_a_waiter_that_gives_up_leaves_its_place_and_the_slot_goes_on() -> None:
    assert asyncio.run(_one_of_two_waiters_quits(after_its_grant=False)) == ["a", "c"]


def test_a_slot_granted_to_a_waiter_that_then_gives_up_is_passed_on() -> None:
    assert asyncio.run(_one_of_two_waiters_quits(after_its_grant=True)) == ["a", "c"]
