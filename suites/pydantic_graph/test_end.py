"""Parallel paths that reach the end node without a join: the first one ends the run."""

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pg_kit
from fanin.probe import Claim, Observer, probe

PATIENCE = 0.5  # deadlock breaker only: how long a sibling nobody cancels is held before it goes on
GRAPH_SOURCE = "https://github.com/pydantic/pydantic-ai/blob/v1.7.0/pydantic_graph/pydantic_graph/beta/graph.py#L512-L514"


@dataclass
class State:
    log: list = field(default_factory=list)


def _race(pg: SimpleNamespace, with_join: bool) -> tuple[Any, list[str], str, list[str]]:
    """`a` and `b` broadcast from the start; `a` finishes while `b` is in flight; either both go to the end
    node (no join) or both go to a join that goes to the end node."""
    working = asyncio.Event()
    a_done = asyncio.Event()
    never_in_flight: list[str] = []
    fate: list[str] = []

    async def a(ctx: Any) -> str:
        try:
            await asyncio.wait_for(working.wait(), 5)
        except asyncio.TimeoutError:
            never_in_flight.append("b was never in flight while a waited")
        ctx.state.log.append("a wrote")
        a_done.set()
        return "A"

    async def b(ctx: Any) -> str:
        ctx.state.log.append("b started")
        working.set()
        try:
            # In flight: it waits for a to finish, then for something that never comes (a cancel, or its patience).
            await a_done.wait()
            await asyncio.wait_for(asyncio.Event().wait(), PATIENCE if not with_join else 0)
        except asyncio.CancelledError:
            fate.append("cancelled")
            raise
        except asyncio.TimeoutError:
            fate.append("ran on")
        ctx.state.log.append("b wrote")
        return "B"

    g = pg.GraphBuilder(state_type=State, output_type=object)
    step_a = g.step(a, node_id="a")
    step_b = g.step(b, node_id="b")
    g.add(g.edge_from(g.start_node).to(step_a, step_b))
    if with_join:
        collect = g.join(pg.reduce_list_append, initial_factory=list)
        g.add(g.edge_from(step_a, step_b).to(collect), g.edge_from(collect).to(g.end_node))
    else:
        g.add(g.edge_from(step_a, step_b).to(g.end_node))
    state = State()
    output = pg_kit.run(g.build(), state)
    return output, state.log, (fate[0] if fate else "never reached its reply"), never_in_flight


@probe(
    "pydantic_graph/end/first-end-wins",
    title="`a` and `b` broadcast from the start, both edged straight to the end node; `a` ends while `b` is in flight",
    claim=Claim(
        "The run ends at the first EndMarker: the task group is cancelled, so a sibling still in flight is"
        " cancelled and its output is never returned, with no error.",
        GRAPH_SOURCE,
        expect={"value.output": "A", "value.sibling": "cancelled"},
    ),
)
def test_first_end_wins(obs: Observer) -> None:
    pg = pg_kit.api(obs)
    with obs.framework():
        output, log, sibling, never_in_flight = _race(pg, with_join=False)
    if never_in_flight:
        obs.vacuous(never_in_flight[0])
    lost = sorted({"A", "B"} - set(output if isinstance(output, list) else [output]))
    obs.record(
        {"output": output, "sibling": sibling, "state_log": log, "lost": lost},
        label=f"first end wins: {output}; b {sibling}" if lost else f"both returned: {output}",
        detail=f"no error; the run returned {output!r}; b, in flight, {sibling}; the state log is {log}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "pydantic_graph/end/first-end-wins-mitigated",
    title="The same two paths joined (reduce_list_append) before the end node",
    claim=Claim(
        "A join waits for all parallel tasks of its fork before anything reaches the end node, so every"
        " path's output is returned.",
        "https://github.com/pydantic/pydantic-ai/blob/v1.7.0/docs/graph/beta/joins.md#overview",
        expect={"value.output": ["A", "B"]},
    ),
)
def test_first_end_wins_mitigated(obs: Observer) -> None:
    pg = pg_kit.api(obs)
    with obs.framework():
        output, log, sibling, never_in_flight = _race(pg, with_join=True)
    if never_in_flight:
        obs.vacuous(never_in_flight[0])
    returned = sorted(output) if isinstance(output, list) else [output]
    lost = sorted({"A", "B"} - set(returned))
    obs.record(
        {"output": returned, "sibling": sibling, "state_log": log, "lost": lost},
        label=f"first end wins: {output}" if lost else "both returned",
        detail=f"no error; the run returned {returned}; b, in flight when a finished, {sibling}; the state log"
        f" is {log}",
        hazard="silent" if lost else "safe",
    )
