"""Gates: force the order in which concurrent branches act, without sleeping.

`Turns(["c", "b", "a"])` holds every branch until all of them are in flight
(proof that the concurrency under test really happened), then releases "c",
then "b" once "c" is done, then "a". Each branch calls `await turns.wait(name)`
before its write and `turns.done(name)` after it.

If the branches never are in flight together (the framework ran them one by
one), the barrier gives up after `patience` seconds, releases everyone in order
and sets `turns.vacuous`: the probe then records `vacuous`, never a pass. The
delay only breaks a deadlock; it never decides an order.
"""

from __future__ import annotations

import asyncio


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
            missing = sorted(set(self.order) - set(self.arrived))
            self.vacuous = f"branches {missing} were never in flight while {name} waited"
            self._events[name].set()

    def done(self, name: str) -> None:
        self.acted.append(name)
        position = self.order.index(name)
        if position + 1 < len(self.order):
            self._events[self.order[position + 1]].set()


class IdleTurns(Turns):
    """`Turns` that learns "they will never be in flight together" from the event loop, not from a clock.

    For scenarios where running one after the other is itself an answer (a version that serialises the
    branches): a branch waiting for its siblings lets every other task run until the loop has nothing
    ready (`settle`); if the siblings still have not arrived, they cannot arrive while it waits, so it
    is released at once and `vacuous` says why. No wall time is spent either way.
    """

    def __init__(self, order: list[str]) -> None:
        super().__init__(order, patience=0.0)

    async def wait(self, name: str) -> None:
        self.arrived.append(name)
        if set(self.arrived) >= set(self.order):
            self._events[self.order[0]].set()
        while not self._events[name].is_set():
            await settle()
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
