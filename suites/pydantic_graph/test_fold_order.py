"""The order a join folds its branches' outputs in, and the order parallel steps start in.

Broadcast branches started in reverse declaration order up to 2.61.0; 2.62.0 made the queue in
`_flatten_paths` (graph_builder.py) first-in first-out, "so a broadcast fork's branches" start "in the
order they were added" (bisected; `pydantic_graph/fold-order/start-order`).
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import gates
import pg_kit
from fanin.probe import Claim, Observer, probe

JOINS_DOC = "https://github.com/pydantic/pydantic-ai/blob/v1.7.0/docs/graph/beta/joins.md#reduce_dict_update"


def _rule(order: list[str], finished: list[str], declared: list[str]) -> str:
    if order == finished and order != declared:
        return "completion"
    if order == declared and order != finished:
        return "declaration"
    return "other"


@probe(
    "pydantic_graph/fold-order/completion-time",
    title="`a`, `b`, `c` broadcast to one join (reduce_list_append); they finish c, b, a",
    claim=Claim(
        "A join reduces each branch's output as it arrives, so a list reducer holds the outputs in completion"
        " order, not in the order the branches were declared (the docs sort results before printing them).",
        JOINS_DOC,
        expect={"value.output": ["C", "B", "A"]},
    ),
)
def test_completion_time(obs: Observer) -> None:
    pg = pg_kit.api(obs)

    @dataclass
    class State:
        pass

    turns = gates.Turns(["c", "b", "a"])

    def branch(name: str) -> Callable[[Any], Awaitable[str]]:
        async def step(ctx: Any) -> str:
            await turns.wait(name)
            turns.done(name)
            return name.upper()

        return step

    g = pg.GraphBuilder(state_type=State, output_type=list)
    steps = [g.step(branch(name), node_id=name) for name in ["a", "b", "c"]]
    collect = g.join(pg.reduce_list_append, initial_factory=list)
    g.add(g.edge_from(g.start_node).to(*steps), g.edge_from(*steps).to(collect), g.edge_from(collect).to(g.end_node))
    with obs.framework():
        output = pg_kit.run(g.build(), State())
    obs.require_in_flight(turns)
    rule = _rule(output, [n.upper() for n in turns.acted], ["A", "B", "C"])
    obs.record(
        {"output": output, "finished": turns.acted, "declared": ["a", "b", "c"], "rule": rule},
        label=f"order: {rule} ({', '.join(output)})",
        detail=f"no error; branches finished {turns.acted}, the join's list is {output}",
        hazard="order-coupled",
    )


@probe(
    "pydantic_graph/fold-order/start-order",
    title="`a`, `b`, `c` broadcast with nothing to wait for: the order they start in, and what the state records",
    claim=Claim(
        "Broadcast branches are started as tasks of one task group; nothing documents their start order, so"
        " a state list the steps append to at their start follows the scheduler's order.",
        "https://github.com/pydantic/pydantic-ai/blob/v1.7.0/docs/graph/beta/parallel.md#broadcasting",
        expect={"hazard": "order-coupled"},
    ),
)
def test_start_order(obs: Observer) -> None:
    pg = pg_kit.api(obs)

    @dataclass
    class State:
        started: list = field(default_factory=list)

    def branch(name: str) -> Callable[[Any], Awaitable[str]]:
        async def step(ctx: Any) -> str:
            ctx.state.started.append(name)
            return name.upper()

        return step

    g = pg.GraphBuilder(state_type=State, output_type=list)
    steps = [g.step(branch(name), node_id=name) for name in ["a", "b", "c"]]
    collect = g.join(pg.reduce_list_append, initial_factory=list)
    g.add(g.edge_from(g.start_node).to(*steps), g.edge_from(*steps).to(collect), g.edge_from(collect).to(g.end_node))
    state = State()
    with obs.framework():
        output = pg_kit.run(g.build(), state)
    declared = ["a", "b", "c"]
    rule = (
        "declaration"
        if state.started == declared
        else "reverse declaration"
        if state.started == declared[::-1]
        else "other"
    )
    obs.record(
        {"started": state.started, "join_output": output, "declared": declared},
        label=f"start order: {rule}",
        detail=f"no error; declared {declared}, started {state.started}, the join's list is {output}",
        hazard="order-coupled",
    )


@probe(
    "pydantic_graph/fold-order/completion-time-mitigated",
    title="The three branches return {name: value} into a reduce_dict_update join, finishing c, b, a and then a, b, c",
    claim=Claim(
        "Keying each branch's output by its own id (reduce_dict_update) and reading the keys sorted gives the"
        " same result whatever order the branches finish in.",
        JOINS_DOC,
        expect={"value.same": True},
    ),
)
def test_completion_time_mitigated(obs: Observer) -> None:
    pg = pg_kit.api(obs)

    @dataclass
    class State:
        pass

    def run(order: list[str]) -> dict:
        turns = gates.Turns(order)

        def branch(name: str) -> Callable[[Any], Awaitable[dict]]:
            async def step(ctx: Any) -> dict:
                await turns.wait(name)
                turns.done(name)
                return {name: name.upper()}

            return step

        g = pg.GraphBuilder(state_type=State, output_type=dict)
        steps = [g.step(branch(name), node_id=name) for name in ["a", "b", "c"]]
        merged = g.join(pg.reduce_dict_update, initial_factory=dict)
        g.add(
            g.edge_from(g.start_node).to(*steps), g.edge_from(*steps).to(merged), g.edge_from(merged).to(g.end_node)
        )
        output = pg_kit.run(g.build(), State())
        obs.require_in_flight(turns)
        return {"finished": turns.acted, "by_key": [[k, output[k]] for k in sorted(output)]}

    with obs.framework():
        runs = [run(["c", "b", "a"]), run(["a", "b", "c"])]
    same = runs[0]["by_key"] == runs[1]["by_key"]
    obs.record(
        {"runs": runs, "same": same},
        label="same result in both orders" if same else "result depends on finish order",
        detail=f"no error; sorted by key: {runs[0]['by_key']} (finished c, b, a) and {runs[1]['by_key']}"
        " (finished a, b, c)",
        hazard="safe" if same else "order-coupled",
    )
