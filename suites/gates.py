"""Gates: force the order in which concurrent branches act, without sleeping.

`Turns(["c", "b", "a"])` holds every branch until all of them are in flight
(proof that the concurrency under test really happened), then releases "c",
then "b" once "c" is done, then "a". Each branch calls `await turns.wait(name)`
before its write and `turns.done(name)` after it. `ThreadTurns` is the same gate
for branches that run in threads (sync LangGraph nodes and deepagents subagents).

If the branches never are in flight together (the framework ran them one by
one), or a branch's predecessor never finishes (it raised or hung before
`done`), the barrier gives up after `patience` seconds, releases the waiting
branch and sets `turns.vacuous` to what happened: the probe then records
`vacuous`, never a pass. The delay only breaks a deadlock; it never decides an order.
"""

from __future__ import annotations

import asyncio
import threading


def _stuck(order: list[str], arrived: list[str], acted: list[str], name: str, patience: float) -> str:
    """Why `name` is still waiting after `patience` seconds: its siblings never came, or one never finished."""
    missing = sorted(set(order) - set(arrived))
    if missing:
        return f"branches {missing} were never in flight while {name} waited"
    unfinished = [n for n in order[: order.index(name)] if n not in acted]
    return (
        f"every branch was in flight, but {unfinished} never finished (raised or hung before done)"
        f" while {name} waited its turn for {patience} s"
    )


class Turns:
    """Release asyncio branches one at a time, in a chosen order, once all are waiting."""

    def __init__(self, order: list[str], patience: float = 10.0) -> None:
        self.order = list(order)
        self.patience = patience
        self.acted: list[str] = []
        self.arrived: list[str] = []
        self.vacuous: str | None = None
        self._events = {name: asyncio.Event() for name in self.order}

    async def wait(self, name: str) -> None:
        self.arrived.append(name)
        if set(self.arrived) >= set(self.order):
            self._events[self.order[0]].set()
        try:
            await asyncio.wait_for(self._events[name].wait(), self.patience)
        except asyncio.TimeoutError:
            self.vacuous = _stuck(self.order, self.arrived, self.acted, name, self.patience)
            self._events[name].set()

    def done(self, name: str) -> None:
        self.acted.append(name)
        position = self.order.index(name)
        if position + 1 < len(self.order):
            self._events[self.order[position + 1]].set()


class ThreadTurns:
    """`Turns` for branches that run in threads: sync LangGraph nodes, deepagents subagents.

    Each branch calls `turns.arrive(name)` at the point the probe orders: it blocks until it is that
    branch's turn. The first name in `order` is released by the last arrival, so all of them are proven
    in flight together. `turns.done(name)` (names not in the order are ignored, so a probe can pass it
    every node of a stream chunk) releases the next one; LangGraph probes call it on the node's
    `["updates", "custom"]` chunk, so the next node goes only once the previous one's writes exist.
    If the gate waits `patience` seconds, everyone is released and `vacuous` says what happened.
    """

    def __init__(self, order: list[str], patience: float = 10.0) -> None:
        self.order = list(order)
        self.patience = patience
        self.arrived: list[str] = []
        self.acted: list[str] = []
        self.vacuous: str | None = None
        self._lock = threading.Lock()
        self._events = {name: threading.Event() for name in self.order}

    def arrive(self, name: str) -> None:
        with self._lock:
            self.arrived.append(name)
            if set(self.arrived) >= set(self.order):
                self._events[self.order[0]].set()
        if not self._events[name].wait(self.patience):
            with self._lock:
                self.vacuous = _stuck(self.order, self.arrived, self.acted, name, self.patience)
            for event in self._events.values():
                event.set()

    def done(self, name: str) -> None:
        if name not in self._events:
            return
        with self._lock:
            self.acted.append(name)
        position = self.order.index(name)
        if position + 1 < len(self.order):
            self._events[self.order[position + 1]].set()

    def turn(self, name: str) -> None:
        """`arrive` then `done`: wait for this branch's turn, then hand it to the next."""
        self.arrive(name)
        self.done(name)


class IdleTurns(Turns):
    """`Turns` that learns "they will never be in flight together" from the event loop, not from a clock.

    For scenarios where running one after the other is itself an answer (a version that serialises the
    branches): a branch waiting for its siblings lets every other task run until the loop has nothing
    ready (`settle`); if the siblings still have not arrived, they cannot arrive while it waits, so it
    is released at once and `vacuous` says why. No wall time is spent either way.
    One waiter settles at a time; the others await its end (an Event): two settling at once would keep
    each other ready, so neither would ever see the loop idle.
    """

    def __init__(self, order: list[str]) -> None:
        super().__init__(order, patience=0.0)
        self._settling: asyncio.Event | None = None

    async def wait(self, name: str) -> None:
        self.arrived.append(name)
        if set(self.arrived) >= set(self.order):
            self._events[self.order[0]].set()
        while not self._events[name].is_set():
            if self._settling is not None:
                await self._settling.wait()
                continue
            self._settling = asyncio.Event()
            try:
                await settle()
            finally:
                self._settling.set()
                self._settling = None
            if self._events[name].is_set():
                break
            if not set(self.arrived) >= set(self.order):
                missing = sorted(set(self.order) - set(self.arrived))
                self.vacuous = f"branches {missing} were never in flight while {name} waited"
                self._events[name].set()
            else:
                await self._events[name].wait()


async def settle(max_rounds: int = 10_000) -> None:
    """Let every runnable task run until none is left (loop iterations, never wall time)."""
    loop = asyncio.get_running_loop()
    for _ in range(max_rounds):
        await asyncio.sleep(0)
        if not loop._ready:  # CPython's queue of ready callbacks
            return
    raise RuntimeError(f"the event loop still had work after {max_rounds} rounds")
