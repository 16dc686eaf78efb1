"""The fixes: one listener per branch instead of or_, and a lock across the read-modify-write of shared state."""

import asyncio
from typing import Any

import cw_kit
from cw_kit import Flow, listen, start
from fanin.probe import Claim, Observer, probe
from mitigation import judge, words


@probe(
    "crewai/or-listener/two-branches-mitigated",
    title="The or-listener flow with `j` replaced by one listener per branch (@listen(a), @listen(b)), each still"
    " running when the other branch finishes",
    claim=Claim(
        "Precondition: code that must act on each branch's result. A single-method listener fires every time"
        " its trigger completes, in every release (only multi-source or_ listeners are tracked as fired from"
        " 1.9.0), so each branch's result reaches its own listener.",
        cw_kit.OR_190,
        expect={"hazard": "safe"},
    ),
    sources=(cw_kit.OR_181, cw_kit.DOCS),
)
async def test_or_two_branches_mitigated(obs: Observer) -> None:
    got: list[str] = []
    a_done, b_done = asyncio.Event(), asyncio.Event()
    log: list[str] = []

    class PerBranch(Flow):
        @start()
        async def s(self) -> str:
            return "s"

        @listen(s)
        async def a(self) -> str:
            a_done.set()
            return "a"

        @listen(s)
        async def b(self) -> str:
            await cw_kit.bounded(a_done, log, "b")
            b_done.set()
            return "b"

        @listen(a)
        async def on_a(self, value: Any = None) -> None:
            await cw_kit.bounded(b_done, log, "on_a")
            got.append(str(value))

        @listen(b)
        async def on_b(self, value: Any = None) -> None:
            got.append(str(value))

    await cw_kit.kickoff(PerBranch())
    runs = {"a first": {"made": ["a", "b"], "kept": sorted(got), "result": sorted(got), "observed": {"log": log}}}
    value, hazard = judge({"listener-per-branch": runs})
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "crewai/state/lost-update-mitigated",
    title="The lost-update flow with both listeners holding one asyncio.Lock across their read-modify-write",
    claim=Claim(
        "Precondition: the listeners run on the flow's one event loop (async methods). A lock held from the"
        " read to the write makes the two increments one after the other: n ends at 2.",
        cw_kit.GATHER_181,
        expect={"hazard": "safe"},
    ),
    sources=("https://docs.python.org/3/library/asyncio-sync.html#asyncio.Lock",),
)
async def test_lost_update_mitigated(obs: Observer) -> None:
    log: list[str] = []
    flow = cw_kit.counter_flow(log, asyncio.Lock())
    await cw_kit.kickoff(flow)
    n = flow.state["n"]
    kept = ["a", "b"][: max(0, min(n, 2))]
    runs = {"gathered": {"made": ["a", "b"], "kept": kept, "result": n, "observed": {"log": log}}}
    value, hazard = judge({"lock": runs})
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)
