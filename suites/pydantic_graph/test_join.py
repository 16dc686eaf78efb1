"""Joins: when they fire, how often, what they see, and what they keep between runs."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pg_kit
from fanin.probe import Claim, Observer, probe

JOINS_DOC = "https://github.com/pydantic/pydantic-ai/blob/v1.7.0/docs/graph/beta/joins.md#overview"
JOIN_SOURCE = "https://github.com/pydantic/pydantic-ai/blob/v1.7.0/pydantic_graph/pydantic_graph/beta/graph_builder.py#L310-L330"


@dataclass
class Runs:
    after: list = field(default_factory=list)


def _build_unequal(pg: SimpleNamespace, wiring: str) -> Any:
    """`a` and `b -> b2` broadcast from the start and joined, wired one of three ways; `after` follows the join."""

    def writer(name: str) -> Callable[[Any], Awaitable[str]]:
        async def step(ctx: Any) -> str:
            return name

        return step

    async def after(ctx: Any) -> list:
        ctx.state.after.append(sorted(ctx.inputs))
        return sorted(ctx.inputs)

    g = pg.GraphBuilder(state_type=Runs, output_type=list)
    a = g.step(writer("a"), node_id="a")
    b = g.step(writer("b"), node_id="b")
    b2 = g.step(writer("b2"), node_id="b2")
    collect = g.join(pg.reduce_list_append, initial_factory=list)
    last = g.step(after, node_id="after")
    g.add(g.edge_from(g.start_node).to(a, b), g.edge_from(b).to(b2))
    if wiring == "edge_from(a, b2)":
        g.add(g.edge_from(a, b2).to(collect))
    elif wiring == "two add_edge calls":
        g.add_edge(a, collect)
        g.add_edge(b2, collect)
    else:
        g.add(g.edge_from(a).to(collect), g.edge_from(b2).to(collect))
    g.add(g.edge_from(collect).to(last), g.edge_from(last).to(g.end_node))
    return g.build()


@probe(
    "pydantic_graph/join/wiring",
    title="The same unequal-depth join wired three ways: edge_from(a, b2).to(j), two add_edge calls, two edge_from paths",
    claim=Claim(
        "A join belongs to its parent fork, not to the edges that reach it: however its incoming edges are"
        " written, it waits for the whole fork and fires once.",
        JOINS_DOC,
        expect={"hazard": "safe"},
    ),
)
def test_wiring(obs: Observer) -> None:
    pg = pg_kit.api(obs)
    runs: dict[str, list] = {}
    with obs.framework():
        for wiring in ["edge_from(a, b2)", "two add_edge calls", "two edge_from paths"]:
            state = Runs()
            pg_kit.run(_build_unequal(pg, wiring), state)
            runs[wiring] = state.after
    alike = all(after == [["a", "b2"]] for after in runs.values())
    obs.record(
        runs,
        label="all 3 wirings: once, every path" if alike else "wirings differ",
        detail=f"no error; the step after the join ran, per wiring: {runs}",
        hazard="safe" if alike else "silent",
    )


def _two_runs(pg: SimpleNamespace, **initial: Any) -> list[list[str]]:
    """One graph, built once, run twice: `a` and `b` broadcast into a reduce_list_append join."""

    @dataclass
    class State:
        pass

    def writer(name: str) -> Callable[[Any], Awaitable[str]]:
        async def step(ctx: Any) -> str:
            return f"{name}{ctx.inputs}"

        return step

    g = pg.GraphBuilder(state_type=State, input_type=int, output_type=list)
    a = g.step(writer("a"), node_id="a")
    b = g.step(writer("b"), node_id="b")
    collect = g.join(pg.reduce_list_append, **initial)
    g.add(g.edge_from(g.start_node).to(a, b), g.edge_from(a, b).to(collect), g.edge_from(collect).to(g.end_node))
    graph = g.build()
    return [sorted(pg_kit.run(graph, State(), inputs=run)) for run in (1, 2)]


@probe(
    "pydantic_graph/join/shared-initial",
    title="A join built with initial=[] (reduce_list_append), the graph run twice",
    claim=Claim(
        "`initial` is wrapped as `initial_factory = lambda: initial`: every run starts its join from that one"
        " list object, which reduce_list_append mutates, so the second run returns the first run's items too.",
        JOIN_SOURCE,
        expect={"value.run2": ["a1", "a2", "b1", "b2"]},
    ),
    sources=["https://github.com/pydantic/pydantic-ai/blob/v1.7.0/docs/graph/beta/joins.md#creating-joins"],
)
def test_shared_initial(obs: Observer) -> None:
    pg = pg_kit.api(obs)
    with obs.framework():
        run1, run2 = _two_runs(pg, initial=[])
    stale = sorted(set(run2) - {"a2", "b2"})
    obs.record(
        {"run1": run1, "run2": run2, "stale_in_run2": stale},
        label=f"run 2 returns run 1's items: {len(stale)}" if stale else "each run starts empty",
        detail=f"no error; run 1 returned {run1}, run 2 returned {run2}",
        hazard="silent" if stale else "safe",
    )


@probe(
    "pydantic_graph/join/shared-initial-mitigated",
    title="The same join built with initial_factory=list, the graph run twice",
    claim=Claim(
        "`initial_factory` is called for every run's join, so each run starts from a new list.",
        JOIN_SOURCE,
        expect={"value.run2": ["a2", "b2"]},
    ),
)
def test_shared_initial_mitigated(obs: Observer) -> None:
    pg = pg_kit.api(obs)
    with obs.framework():
        run1, run2 = _two_runs(pg, initial_factory=list)
    stale = sorted(set(run2) - {"a2", "b2"})
    obs.record(
        {"run1": run1, "run2": run2, "stale_in_run2": stale},
        label=f"run 2 returns run 1's items: {len(stale)}" if stale else "each run starts empty",
        detail=f"no error; run 1 returned {run1}, run 2 returned {run2}",
        hazard="silent" if stale else "safe",
    )
