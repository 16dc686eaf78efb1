"""Parallel steps and the one mutable state object they share."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import gates
import pg_kit
from fanin.probe import Claim, Observer, probe

STEPS_DOC = "https://github.com/pydantic/pydantic-ai/blob/v1.7.0/docs/graph/beta/steps.md#accessing-state"


@probe(
    "pydantic_graph/same-key/last-writer",
    title="`a` and `b`, broadcast from the start, both set one field of the graph state; `b` writes first, `a` last",
    claim=Claim(
        "State is shared across all steps in a graph and can be freely mutated: parallel steps write the same"
        " object, there is no per-branch copy and no merge, so the last writer's value is what remains.",
        STEPS_DOC,
        expect={"value.final": "A", "value.lost": ["B"]},
    ),
)
def test_last_writer(obs: Observer) -> None:
    pg = pg_kit.api(obs)

    @dataclass
    class State:
        value: str = "init"

    turns = gates.Turns(["b", "a"])  # the reverse of the declaration order

    def writer(name: str) -> Callable[[Any], Awaitable[str]]:
        async def step(ctx: Any) -> str:
            await turns.wait(name)
            ctx.state.value = name.upper()
            turns.done(name)
            return name.upper()

        return step

    g = pg.GraphBuilder(state_type=State, output_type=list)
    a = g.step(writer("a"), node_id="a")
    b = g.step(writer("b"), node_id="b")
    collect = g.join(pg.reduce_list_append, initial_factory=list)
    g.add(g.edge_from(g.start_node).to(a, b), g.edge_from(a, b).to(collect), g.edge_from(collect).to(g.end_node))
    state = State()
    with obs.framework():
        output = pg_kit.run(g.build(), state)
    obs.require_in_flight(turns)
    lost = sorted({"A", "B"} - {state.value})
    obs.record(
        {"final": state.value, "write_order": turns.acted, "join_output": sorted(output), "lost": lost},
        label=f"last writer wins: {state.value}" if lost else f"kept: {state.value}",
        detail=f"no error; writes in order {turns.acted}, the state keeps {state.value!r}; the join's own output"
        f" (returned values) holds {sorted(output)}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "pydantic_graph/same-key/read-modify-write",
    title="`a` and `b` both read a counter in the state, then (after both have read it) write it back plus one",
    claim=Claim(
        "State is one shared mutable object with no locking or merge: two parallel read-modify-write steps"
        " that interleave at an await lose an increment.",
        STEPS_DOC,
        expect={"value.final": 1},
    ),
)
def test_read_modify_write(obs: Observer) -> None:
    pg = pg_kit.api(obs)

    @dataclass
    class State:
        count: int = 0

    turns = gates.Turns(["a", "b"])  # released only once both have read the counter

    def incrementer(name: str) -> Callable[[Any], Awaitable[None]]:
        async def step(ctx: Any) -> None:
            seen = ctx.state.count
            await turns.wait(name)
            ctx.state.count = seen + 1
            turns.done(name)

        return step

    g = pg.GraphBuilder(state_type=State, output_type=object)
    a = g.step(incrementer("a"), node_id="a")
    b = g.step(incrementer("b"), node_id="b")
    done = g.join(pg.reduce_list_append, initial_factory=list)
    g.add(g.edge_from(g.start_node).to(a, b), g.edge_from(a, b).to(done), g.edge_from(done).to(g.end_node))
    state = State()
    with obs.framework():
        pg_kit.run(g.build(), state)
    obs.require_in_flight(turns)
    lost = 2 - state.count
    obs.record(
        {"final": state.count, "increments": 2, "lost_increments": lost},
        label=f"lost update: {state.count} of 2" if lost else "both increments kept",
        detail=f"no error; two increments of 0 leave the counter at {state.count}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "pydantic_graph/same-key/read-modify-write-mitigated",
    title="The same two increments returned as step outputs, summed by a join (reduce_sum), written once after it",
    claim=Claim(
        "A join folds every branch's output with its reducer before the next step runs, so a value computed"
        " from the join's output keeps every branch's contribution whatever the interleaving.",
        "https://github.com/pydantic/pydantic-ai/blob/v1.7.0/docs/graph/beta/joins.md#reduce_sum",
        expect={"value.final": 2},
    ),
)
def test_read_modify_write_mitigated(obs: Observer) -> None:
    pg = pg_kit.api(obs)

    @dataclass
    class State:
        count: int = 0

    turns = gates.Turns(["a", "b"])

    def incrementer(name: str) -> Callable[[Any], Awaitable[int]]:
        async def step(ctx: Any) -> int:
            await turns.wait(name)
            turns.done(name)
            return 1

        return step

    async def apply(ctx: Any) -> int:
        ctx.state.count += ctx.inputs
        return ctx.state.count

    g = pg.GraphBuilder(state_type=State, output_type=int)
    a = g.step(incrementer("a"), node_id="a")
    b = g.step(incrementer("b"), node_id="b")
    total = g.join(pg.reduce_sum, initial=0)
    write = g.step(apply, node_id="apply")
    g.add(
        g.edge_from(g.start_node).to(a, b),
        g.edge_from(a, b).to(total),
        g.edge_from(total).to(write),
        g.edge_from(write).to(g.end_node),
    )
    state = State()
    with obs.framework():
        pg_kit.run(g.build(), state)
    obs.require_in_flight(turns)
    lost = 2 - state.count
    obs.record(
        {"final": state.count, "increments": 2, "lost_increments": lost},
        label=f"lost update: {state.count} of 2" if lost else "both increments kept",
        detail=f"no error; the join sums the branches' outputs, the counter ends at {state.count}",
        hazard="silent" if lost else "safe",
    )
