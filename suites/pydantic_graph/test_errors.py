"""One parallel step raises while its sibling is still in flight."""

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pg_kit
from fanin.probe import Claim, Observer, probe

PATIENCE = 0.5  # deadlock breaker only: how long a sibling nobody cancels is held before it goes on


@probe(
    "pydantic_graph/errors/failing-sibling",
    title="`a` and `b` broadcast to a join; `a` raises while `b` is in flight, after `b` wrote to the state",
    claim=Claim(
        "A step's exception ends the run: graph.run raises the step's own exception (not a group), the"
        " sibling still in flight is cancelled, and what it already wrote to the shared state stays there.",
        "https://github.com/pydantic/pydantic-ai/blob/v1.7.0/pydantic_graph/pydantic_graph/beta/graph.py",
        expect={"value.run.raises": "RuntimeError", "value.sibling": "cancelled"},
    ),
)
def test_failing_sibling(obs: Observer) -> None:
    pg = pg_kit.api(obs)

    @dataclass
    class State:
        log: list = field(default_factory=list)

    working = asyncio.Event()
    never_in_flight: list[str] = []
    fate: list[str] = []

    async def failing(ctx: Any) -> str:
        try:
            await asyncio.wait_for(working.wait(), 5)
        except asyncio.TimeoutError:
            never_in_flight.append("the sibling was never in flight while the failing step waited")
        raise RuntimeError("branch failed")

    async def sibling(ctx: Any) -> str:
        ctx.state.log.append("sibling wrote before the failure")
        working.set()
        try:
            await asyncio.wait_for(asyncio.Event().wait(), PATIENCE)
        except asyncio.CancelledError:
            fate.append("cancelled")
            raise
        except asyncio.TimeoutError:
            fate.append("ran on")
        ctx.state.log.append("sibling wrote after the failure")
        return "B"

    g = pg.GraphBuilder(state_type=State, output_type=list)
    a = g.step(failing, node_id="a")
    b = g.step(sibling, node_id="b")
    collect = g.join(pg.reduce_list_append, initial_factory=list)
    g.add(g.edge_from(g.start_node).to(a, b), g.edge_from(a, b).to(collect), g.edge_from(collect).to(g.end_node))
    graph = g.build()
    state = State()
    run = obs.attempt(lambda: pg_kit.run(graph, state))
    if never_in_flight:
        obs.vacuous(never_in_flight[0])
    fate_of_sibling = fate[0] if fate else "never reached its reply"
    outcome = run.get("raises", "returned")
    obs.record(
        {
            "run": {"raises": run["raises"]} if "raises" in run else {"returned": run["returned"]},
            "sibling": fate_of_sibling,
            "state_log": state.log,
        },
        label=f"{outcome}; sibling {fate_of_sibling}",
        detail=f"run {outcome}; the sibling, in flight, {fate_of_sibling}; the shared state keeps {state.log}",
        hazard="loud" if "raises" in run else "silent",
    )
