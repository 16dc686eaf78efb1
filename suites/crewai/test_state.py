"""Shared `self.state` written by two parallel listeners: a read-modify-write across an await."""

import asyncio
from typing import Any

import cw_kit
from cw_kit import Flow, listen, start
from fanin.probe import Claim, Observer, probe


def counter_flow(log: list[str], lock: asyncio.Lock | None = None) -> Any:
    """s sets state["n"] = 0 -> a, b each read n, await, write n + 1. Without a lock both read before either
    writes (each waits until both have read); with `lock` each holds it across its read-modify-write, and the
    first holder waits until the other has started (so the two are in flight together)."""
    read = {"a": asyncio.Event(), "b": asyncio.Event()}
    started = {"a": asyncio.Event(), "b": asyncio.Event()}

    async def bump(flow: Any, me: str, other: str) -> str:
        started[me].set()
        if lock is None:
            n = flow.state["n"]
            read[me].set()
            await cw_kit.bounded(read[other], log, me)
            flow.state["n"] = n + 1
        else:
            async with lock:
                n = flow.state["n"]
                await cw_kit.bounded(started[other], log, me)
                flow.state["n"] = n + 1
        log.append(f"{me}:{n}->{n + 1}")
        return me

    class Counter(Flow):
        @start()
        async def s(self) -> str:
            self.state["n"] = 0
            return "s"

        @listen(s)
        async def a(self) -> str:
            return await bump(self, "a", "b")

        @listen(s)
        async def b(self) -> str:
            return await bump(self, "b", "a")

    return Counter()


@probe(
    "crewai/state/lost-update",
    title="start `s` sets state['n'] = 0; listeners `a` and `b` each read n, await, write n + 1; both read first",
    claim=Claim(
        "Precondition: two listeners of one method update the same state key with a read-modify-write across"
        " an await. They run concurrently (asyncio.gather of the triggered listeners) on one shared state"
        " object with no merge: the last writer wins and one increment is lost. 1.9.0's StateProxy takes a"
        " lock for each single write, not across the read and the write, so it loses the update too.",
        cw_kit.GATHER_181,
        expect={"hazard": "silent", "value.n": 1},
    ),
    sources=(cw_kit.PROXY_190, cw_kit.DOCS),
)
async def test_lost_update(obs: Observer) -> None:
    log: list[str] = []
    flow = counter_flow(log)
    await cw_kit.kickoff(flow)
    n = flow.state["n"]
    obs.record(
        {"n": n, "log": log},
        label="one increment lost" if n == 1 else f"n = {n}",
        detail=f"two increments of 0 left n = {n}; writes {log}",
        hazard="silent" if n < 2 else "safe",
    )
