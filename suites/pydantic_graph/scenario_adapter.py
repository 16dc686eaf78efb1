"""pydantic-graph's scenario adapter (docs/ADAPTERS.md): a scenario built with the parallel GraphBuilder.

Every branch is a step broadcast from the start (a branch of several parts, split by `then`, is a
chain of steps, `b -> b.2`); the join is `g.join(reduce_list_append)`, so `join.saw` is the list of the
last steps' return values as the join received them, and a step after it counts its runs (`join.runs`). State is the graph's
one mutable state object (a dataclass of the scenario's keys): `read` and `write` are attribute
reads and assignments on `ctx.state`, which every step shares. A conditional fan-out (`select`) is a
decision whose taken branch broadcasts to the selected steps. With `runs`, the graph is built once and run
again on a fresh state object, so what the second run's join holds of the first is the join's own. Nothing of
a run is stored (`thread`, `together`, `pause`, `resume`: n/a, the reasons read from the parallel Graph's `run`). After a run, raised or not, the
caller still holds that object: it is the `final` state. Versions without the parallel API answer
n/a with pg_kit's reason.

Run as a program: `PYTHONPATH=suites:. python suites/pydantic_graph/scenario_adapter.py`.
"""

from __future__ import annotations

import importlib.util
from dataclasses import field, make_dataclass
from importlib.metadata import version
from typing import Any

import pg_kit
import scenario_kit


class _Refuse:
    """pg_kit.api's `obs`: a version without the parallel API cannot express any scenario."""

    def not_applicable(self, reason: str) -> None:
        raise scenario_kit.NotExpressible(reason)


def capabilities() -> dict[str, Any]:
    return scenario_kit.declare(
        "pydantic_graph",
        version("pydantic-graph"),
        _nothing_stored(),
        also=("escalate", "runs", "thread", "stall", "together", "pause", "resume"),
    )


def _nothing_stored() -> dict[str, str]:
    """Why two runs cannot go on one stored thread, a step cannot pause for input, nor a stopped run be resumed,
    read from the installed parallel Graph's `run`."""
    import inspect
    import sys

    try:
        pg = pg_kit.api(_Refuse())
    except scenario_kit.NotExpressible as exc:
        return dict.fromkeys(("thread", "together", "pause", "resume"), str(exc))
    graph = sys.modules[pg.GraphBuilder.__module__].Graph
    taken = ", ".join(name for name in inspect.signature(graph.run).parameters if name != "self")
    sequential = (
        " (pydantic_graph.persistence belongs to the sequential BaseNode Graph, which has no parallel branches)"
        if importlib.util.find_spec("pydantic_graph.persistence") is not None
        else ""
    )
    unstored = f"{pg.module}'s Graph.run takes only ({taken}): nothing is stored between runs to go on{sequential}"
    return {
        "thread": unstored,
        "together": unstored,
        "pause": "a step has no way to ask for input mid-run: it returns its output or raises, which ends the run",
        "resume": f"{pg.module}'s Graph.run takes only ({taken}): nothing of a stopped run is stored to resume from"
        + sequential,
    }


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    pg = pg_kit.api(_Refuse())
    script = scenario_kit.Script(scenario, order)
    initial = script.state
    State = make_dataclass("State", [(key, Any, field(default=value)) for key, value in initial.items()])

    def step_of(name: str, part: int) -> Any:
        async def step(ctx: Any) -> Any:
            return await script.branch(
                name,
                read=lambda key: getattr(ctx.state, key),
                write=lambda key, value: setattr(ctx.state, key, value),
                part=part,
            )

        return step

    async def after(ctx: Any) -> list[Any]:
        script.join_runs += 1
        return list(ctx.inputs)

    g = pg.GraphBuilder(state_type=State, output_type=list)
    chains = [
        [g.step(step_of(name, part), node_id=script.node(name, part)) for part in range(script.parts(name))]
        for name in script.branches
    ]
    collect = g.join(pg.reduce_list_append, initial_factory=list)
    joined = g.step(after, node_id="join")
    firsts = {name: chain[0] for name, chain in zip(script.branches, chains)}
    if script.selected == script.branches:
        fan_out = g.edge_from(g.start_node).to(*firsts.values())
    else:  # a decision: the first branch that matches is taken; the unselected steps sit behind one that never does
        left_out = [firsts[name] for name in script.branches if name not in script.selected]
        decision = (
            g.decision(node_id="select")
            .branch(g.match(object, matches=lambda _: False).to(*left_out))
            .branch(g.match(object).to(*(firsts[name] for name in script.selected)))
        )
        fan_out = g.edge_from(g.start_node).to(decision)
    g.add(
        fan_out,
        *(g.edge_from(one).to(two) for chain in chains for one, two in zip(chain, chain[1:])),
        # A branch that asks to stop the run (`escalate`) is edged to the end node, pydantic-graph's way to end it.
        *(
            g.edge_from(chain[-1]).to(g.end_node)
            for name, chain in zip(script.branches, chains)
            if script.escalates(name)
        ),
        g.edge_from(*(chain[-1] for name, chain in zip(script.branches, chains) if not script.escalates(name))).to(
            collect
        ),
        g.edge_from(collect).to(joined),
        g.edge_from(joined).to(g.end_node),
    )
    graph = g.build()
    for number in range(script.runs):  # `runs`: the graph built once, each run on a fresh state object
        if number:
            await script.again()
        state = State()
        raises, saw, error = None, None, None
        try:
            saw = await script.run(graph.run(state=state))
        except Exception as exc:
            raises, error = type(exc).__name__, exc
    return await script.answer(
        raises=raises, final=lambda: {key: getattr(state, key) for key in initial}, saw=saw, error=error
    )


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
