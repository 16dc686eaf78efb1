"""Strands Agents' scenario adapter (docs/ADAPTERS.md): a scenario as a GraphBuilder graph of plain steps.

Each branch is an entry point of the graph (a `then` makes it a chain of nodes, `b`, `b.2`, ...), and every
branch's last node has an edge to one `join` node. A branch's `read` and `write` are keys of the
`invocation_state` dict the caller passes to `Graph.invoke_async`, the one object the graph hands every node;
a version whose nodes receive none cannot express a scenario that reads or writes (n/a, from the run). The
join runs each time the graph makes it ready: `join.runs` counts them and `join.saw` is, over its runs, the
returned values of the nodes its input names ("From <id>:", in the graph's order; a branch without a return
step returns its name). `final` is the invocation_state the caller still holds (null where the graph passes
none). A version that runs a batch's nodes one after another is vacuous: no gate can order them. A conditional
fan-out (`select`) is one entry node, `select`, with a conditional edge to each branch's first node
(`add_edge(..., condition=...)`), true for the selected branches only; the join keeps its edges from every branch.
With `runs`, the one built graph runs again with a fresh invocation_state; with `thread`, the graph is built with a
session manager (a FileSessionManager in a temporary directory, `set_session_manager`), which persists the graph's
own state after each run and reads it back before the next: both runs on one stored session. With `pause`, a
`BeforeNodeCallEvent` hook interrupts a pausing branch's node before it runs (`event.interrupt`); with `resume`, the
graph runs on a FileSessionManager too and a second graph, on a new one over the same directory, reads the stopped
run back and runs on: given the interrupt responses after a pause, the task after a failure (st_resume.py).

Run as a program: `PYTHONPATH=suites:. python suites/strands/scenario_adapter.py`.
"""

import tempfile
from importlib.metadata import version
from collections.abc import Callable
from typing import Any

import scenario_kit
import st_kit
import st_resume
from strands.multiagent import GraphBuilder


def capabilities() -> dict[str, Any]:
    cannot = {
        "escalate": "a graph node has no way to stop the graph: a run stops on its limits (max_node_executions,"
        " execution_timeout: status FAILED) or an interrupt, never on a node's request",
    }
    if not hasattr(GraphBuilder, "set_session_manager"):
        cannot["thread"] = (
            "GraphBuilder has no set_session_manager: a graph stores nothing between runs (no session to run on)"
        )
    cannot["together"] = cannot.get("thread") or _no_stored_keys()
    cannot.update(st_resume.cannot())
    also = ("runs", "thread", "stall", "pause", "resume")
    return scenario_kit.declare("strands", version("strands-agents"), cannot, also=also)


def _no_stored_keys() -> str:
    """Why two runs on one session directory share no key to read-modify-write, read from this release's Graph."""
    import inspect

    from strands.multiagent.graph import Graph

    saved = getattr(Graph, "serialize_state", None)
    if saved is None:
        return "Graph has no serialize_state: the session manager stores no graph state a second worker could read"
    if "invocation_state" in inspect.getsource(saved):
        return "Graph.serialize_state names invocation_state: the adapter does not open two session managers yet"
    return (
        "a node's keys are the invocation_state dict the caller passes to invoke_async, and the session manager"
        " persists Graph.serialize_state(), which leaves it out (its source names no invocation_state): two workers"
        " on one session directory share no key"
    )


def _touches_state(scenario: dict[str, Any]) -> bool:
    return any(isinstance(step, dict) and ("read" in step or "write" in step)
               for branch in scenario["branches"] for step in branch["do"])


def _route(chosen: bool) -> Callable[[Any], bool]:
    """A conditional edge's condition: the select node starts this branch, or does not."""
    return lambda _state: chosen


async def run(scenario: dict[str, Any], order: list[str]) -> dict[str, Any]:
    apart = await st_kit.together()
    if apart is not None:
        return {"vacuous": f"the graph ran its entry points one after another ({apart})"}
    if _touches_state(scenario) and not await st_kit.passes_state():
        raise scenario_kit.NotExpressible("the graph hands its nodes no invocation_state: no state shared by branches")
    script = scenario_kit.Script(scenario, order)
    state: dict[str, Any] = script.state
    keys = list(state)
    steps: dict[str, st_kit.Step] = {}
    edges: list[tuple[str, str]] = []
    owner: dict[str, str] = {}
    saw: list[Any] = []

    def part(name: str, index: int) -> st_kit.StepFn:
        async def fn(fed: list[str], shared: dict[str, Any] | None) -> None:
            box: dict[str, Any] = shared if shared is not None else {}
            pause = st_resume.answer(script)  # `pause`: the node runs once its hook's interrupt was answered
            await script.branch(name, read=box.__getitem__, write=box.__setitem__, part=index, pause=pause)

        return fn

    async def join(fed: list[str], shared: dict[str, Any] | None) -> None:
        script.join_runs += 1
        for node in fed:
            branch = owner.get(node)
            if branch is not None:
                returned = script.results.get(branch)
                saw.append(branch if returned is None else returned)

    for name in script.branches:
        for index in range(script.parts(name)):
            node = script.node(name, index)
            steps[node] = st_kit.Step(part(name, index))
            owner[node] = name
            if index:
                edges.append((script.node(name, index - 1), node))
        edges.append((script.node(name, script.parts(name) - 1), "join"))
    steps["join"] = st_kit.Step(join)
    entries = list(script.branches)
    conditions: dict[tuple[str, str], Callable[[Any], bool]] = {}
    if script.selected != script.branches:  # a router: conditional edges start the selected branches only
        steps["select"] = st_kit.Step(st_kit.nothing)
        entries = ["select"]
        for name in script.branches:
            edges.append(("select", name))
            conditions[("select", name)] = _route(name in script.selected)
    # `pause`: a hook interrupts a pausing branch's node before it runs (st_resume).
    hooks = [st_resume.Asks(script, owner)] if st_resume.pauses(script) else None
    ran = [steps]  # every graph's steps (`resume` builds a second graph)
    with tempfile.TemporaryDirectory(prefix="fanin-strands-") as storage:
        # `thread` and `resume`: one FileSessionManager (a session on disk) the graph persists its state to.
        session = _session(storage) if script.same_thread or script.resumes else None
        graph, _ = st_kit.build(
            steps, edges, entries, limit=50, conditions=conditions, session_manager=session, hooks=hooks
        )
        for number in range(script.runs):  # `runs`: the one built graph run again, a fresh invocation_state
            if number:
                await script.again()
                saw.clear()  # the adapter's own record of the join, per run
                state = script.state
                for step in steps.values():
                    step.states.clear()
            raises, error = None, None
            result = None
            try:
                result = await script.run(st_kit.run(graph, state))
            except Exception as exc:
                raises, error = type(exc).__name__, exc
        if script.resumes:  # `resume`: a second graph on the session's directory, its state read back, run on
            await script.resume()
            again = {node: st_kit.Step(step.fn) for node, step in steps.items()}
            ran.append(again)
            graph, _ = st_kit.build(
                again, edges, entries, limit=50, conditions=conditions, session_manager=_session(storage), hooks=hooks
            )
            raises, error = None, None
            try:
                await script.run(st_kit.run(graph, state, task=st_resume.responses(result)))
            except Exception as exc:
                raises, error = type(exc).__name__, exc
    passed = any(seen is state for built in ran for step in built.values() for seen in step.states)
    final = lambda: {k: state.get(k) for k in keys} if passed else None  # noqa: E731
    return await script.answer(raises=raises, final=final, saw=saw if script.join_runs else None, error=error)


def _session(storage: str) -> Any:
    """A file-backed session manager, the graph's store between runs (GraphBuilder.set_session_manager)."""
    from strands.session.file_session_manager import FileSessionManager

    return FileSessionManager(session_id="scenario", storage_dir=storage)


ADAPTER = scenario_kit.Adapter(capabilities=capabilities, run=run)

if __name__ == "__main__":
    scenario_kit.serve(ADAPTER)
