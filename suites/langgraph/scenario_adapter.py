"""LangGraph's scenario adapter (docs/ADAPTERS.md): a scenario as a StateGraph of async nodes under `ainvoke`.

Every scenario key is a plain channel (no reducer), every branch a node fanned out from START (a branch
of several parts, split by `then`, is a chain of nodes, `b -> b.2`), the branches' last nodes joined by one
node (`add_edge([...], "join")`: it waits for all of them), which counts its runs (`join.runs`). A
conditional fan-out (`select`) is `add_conditional_edges(START, ...)` naming the selected branches. A branch reads its
input state (or what it wrote itself) and writes by returning an update at its end; its `return`
value goes to an appending channel (`operator.add`) the join reads, `join.saw`. The graph runs with a
MemorySaver, so `final` is what `aget_state` shows after the run, raised or not (null when it refuses). With
`runs`, the one compiled graph runs again with a fresh input on a thread of its own (a new conversation); with
`thread`, on the first run's thread, its input the scenario's keys and an empty list of returns (reducer: appended).
With `resume` (lg_resume.py), the stopped run is resumed on its thread: `Command(resume=...)` after an
`interrupt()` (`pause`), `None` after a failure.
A branch that asks to stop the run (`escalate`) ends its last node with `Command(goto=END)`, LangGraph's way
for a node to route to the end, and has no edge to the join (the join waits on the other branches only).
With `together`, two runs at once on one thread, each graph on its own AsyncSqliteSaver on one SQLite file
(suites/langgraph/scenario_together.py).

Run as a program: `PYTHONPATH=suites:. python suites/langgraph/scenario_adapter.py`.
"""

from __future__ import annotations

import operator
from importlib.metadata import version
from typing import Annotated, Any

import scenario_kit
import lg_resume
import scenario_together
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

RETURNS = "fanin_returns"  # the channel the branches' `return` values are appended to, for the join to read


def capabilities() -> dict[str, Any]:
    cannot = lg_resume.cannot()
    also = ("runs", "thread", "escalate", "stall", "together", "pause", "resume")
    return scenario_kit.declare("langgraph", version("langgraph"), cannot, also=also)


def _command() -> Any:
    """`Command`, a node's way to route itself (`goto=END`: an escalating branch ends its path there)."""
    try:
        from langgraph.types import Command
    except ImportError as exc:  # a version without Command: a node cannot route itself to the end
        raise scenario_kit.NotExpressible(f"no langgraph.types.Command: {exc}") from exc
    return Command


def state_of(script: scenario_kit.Script) -> Any:
    """The graph's state: every scenario key a plain channel, and the appending channel of the branches' returns."""
    fields: dict[str, Any] = {key: Any for key in script.state}
    fields[RETURNS] = Annotated[list, operator.add]
    state: Any = TypedDict("State", fields)  # type: ignore[misc]
    return state


def build(script: scenario_kit.Script, joined: dict[str, Any]) -> Any:
    """The scenario's StateGraph, uncompiled: its branches run `script`'s steps, its join records into `joined`."""
    command: Any = _command() if any(script.escalates(name) for name in script.branches) else None

    def node_of(name: str, part: int) -> Any:
        async def node(state: dict[str, Any]) -> Any:
            update: dict[str, Any] = {}

            def write(key: str, value: Any) -> None:
                update[key] = value

            returned = await script.branch(
                name, read=lambda key: update.get(key, state[key]), write=write, part=part, pause=lg_resume.pause
            )
            if returned is not None:
                update[RETURNS] = [returned]
            if part == script.parts(name) - 1 and script.escalates(name):
                return command(update=update, goto=END)
            return update

        return node

    async def join(state: dict[str, Any]) -> dict[str, Any]:
        script.join_runs += 1
        joined["saw"] = list(state[RETURNS])
        return {}

    builder = StateGraph(state_of(script))
    lasts, firsts = [], {}
    for name in script.branches:
        nodes = [script.node(name, part) for part in range(script.parts(name))]
        for part, node in enumerate(nodes):
            builder.add_node(node, node_of(name, part))
        firsts[name] = nodes[0]
        for one, two in zip(nodes, nodes[1:]):
            builder.add_edge(one, two)
        if not script.escalates(name):
            lasts.append(nodes[-1])
    if script.selected == script.branches:
        for node in firsts.values():
            builder.add_edge(START, node)
    else:  # a conditional fan-out: the router names the selected branches' first nodes
        chosen = [firsts[name] for name in script.selected]
        builder.add_conditional_edges(START, lambda state: chosen, list(firsts.values()))
    builder.add_node("join", join)
    builder.add_edge(lasts, "join")
    builder.add_edge("join", END)
    return builder


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    script = scenario_kit.Script(scenario, order)
    if script.together:  # two runs at once, each on its own checkpointer on one SQLite file
        return await scenario_together.run(script, build, state_of(script))
    initial = script.state
    joined: dict[str, Any] = {}
    graph = build(script, joined).compile(checkpointer=MemorySaver())
    for number in range(script.runs):  # `runs`: the compiled graph run again, a fresh input on a new thread
        thread = 1 if script.same_thread else number + 1  # `thread`: every run on the first run's thread
        if number:
            await script.again()
            joined.clear()  # the adapter's own record of the join, per run
        config = {"configurable": {"thread_id": f"scenario-{thread}"}}
        raises, error = None, None
        try:
            await script.run(graph.ainvoke({**initial, RETURNS: []}, config))
        except Exception as exc:
            raises, error = type(exc).__name__, exc
    if script.resumes:  # `resume`: the stopped run resumed once on its thread, LangGraph's way
        await script.resume()
        raises, error = None, None
        try:
            await script.run(graph.ainvoke(lg_resume.resume_input(script), config))
        except Exception as exc:
            raises, error = type(exc).__name__, exc
    snapshot: list[Any] = []
    try:
        snapshot.append(await graph.aget_state(config))
    except Exception:
        pass  # the caller can read no state: final is null

    def final() -> dict[str, Any] | None:
        values = {k: v for k, v in (snapshot[0].values if snapshot else {}).items() if k != RETURNS}
        return values or None

    return await script.answer(raises=raises, final=final, saw=joined.get("saw"), error=error)


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
