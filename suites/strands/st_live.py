"""A live graph run across releases: one interpreter leaves it paused mid-fan-out in a FileSessionManager directory,
another resumes it.

The writer runs as `python st_live.py write FOLDER` with an earlier release's interpreter (the contract's
EARLIER_PYTHON), or with the probe's own for the same-release control; it prints one JSON line. The graph is two
entry points `a` and `b`, both with an edge to `join` (GraphBuilder, st_kit's steps: no model, no AWS client), built
with a FileSessionManager on FOLDER (`set_session_manager`), which persists `Graph.serialize_state()` after each node
and run. `a` returns its output (an AgentResult whose message says `a-done`, what the join's input quotes); a
BeforeNodeCallEvent hook (`set_hook_providers`) waits, before `b` runs, until `a`'s node has completed (its
AfterNodeCallEvent, a gate, never a clock) and then calls `event.interrupt(...)`: the graph marks `b` INTERRUPTED,
finishes the batch and returns INTERRUPTED with the interrupt listed (st_resume.py's pause, the scenario adapter's).
The resumer builds the same graph (same node ids, the default graph id) on a new FileSessionManager over the folder,
which reads the stored state back, and invokes it with one `interruptResponse` per interrupt the writer's result
listed (what the caller holds): the hook's `event.interrupt(...)` then returns the response, `b` runs with it and
the join runs. Both sides count their own nodes' runs.

Plain data only: the writer's side imports nothing of fanin's (st_kit is the suite's, framework only; gates is
plain asyncio). A release that cannot pause a graph at a node or resume it from a session says why (`cannot`)
instead of writing.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from typing import Any

import st_kit

SESSION = "live"
GRAPH = "default_graph"  # GraphBuilder's default id: the session's graph state is stored under it
ASK = "fanin-live-b"  # the interrupt's name (unique across the hook's callbacks)
ANSWER = "approved"
A_OUTPUT = "a-done"
GATE_SECONDS = 10.0  # only a hang guard: b asks once a's node has completed


def cannot() -> dict[str, str]:
    """Why this release cannot pause a graph at a node or resume it from its session, read from the package (empty:
    it can).

    st_resume.cannot()'s test and words, repeated here: the writer runs in the earlier release's interpreter, where
    the suite's scenario kit (and fanin) is not importable."""
    import dataclasses

    from strands.multiagent.graph import GraphBuilder, GraphState

    found: dict[str, str] = {}
    event = _before_node_call()
    if event is None:
        found["pause"] = (
            "strands has no BeforeNodeCallEvent (strands.hooks, strands.experimental.hooks.multiagent): no hook runs"
            " before a graph node, to ask there"
        )
    elif not hasattr(event, "interrupt"):
        found["pause"] = "BeforeNodeCallEvent has no interrupt(): a hook before a graph node cannot ask a person"
    elif "interrupted_nodes" not in {f.name for f in dataclasses.fields(GraphState)}:
        found["pause"] = "GraphState has no interrupted_nodes: a graph cannot stop at a node's interrupt"
    if not hasattr(GraphBuilder, "set_session_manager"):
        found["resume"] = "GraphBuilder has no set_session_manager: a graph run stores nothing to resume from"
    return found


def _node_event(name: str) -> Any:
    """The hook event `name` of a graph node: strands.hooks's, or the experimental one of earlier releases."""
    for module in ("strands.hooks", "strands.experimental.hooks.multiagent"):
        try:
            event = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if event is not None:
            return event
    return None


def _before_node_call() -> Any:
    return _node_event("BeforeNodeCallEvent")


def _after_node_call() -> Any:
    return _node_event("AfterNodeCallEvent")


def _counts() -> dict[str, int]:
    return {"a": 0, "b asked": 0, "b": 0, "join": 0}


class Said(st_kit.Step):
    """A step whose result carries the text its function returns (an AgentResult's message, as an agent node's
    would), so the join's input quotes it; the texts of each input it was given are kept in `inputs`."""

    def __init__(self, node: str, fn: Any) -> None:
        super().__init__(st_kit.nothing)
        self.node, self.said = node, fn
        self.inputs: list[list[str]] = []

    async def invoke_async(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        from strands.agent.agent_result import AgentResult
        from strands.multiagent.base import MultiAgentResult, NodeResult, Status
        from strands.telemetry.metrics import EventLoopMetrics

        self.inputs.append([str(block.get("text", "")) for block in task] if isinstance(task, list) else [str(task)])
        text = await self.said()
        message = {"role": "assistant", "content": [{"text": text}]}
        said = AgentResult(stop_reason="end_turn", message=message, metrics=EventLoopMetrics(), state={})
        return MultiAgentResult(status=Status.COMPLETED, results={self.node: NodeResult(result=said)})


class Ask:
    """The hook provider: before `b` runs, wait for `a`'s node (the writer's gate) and ask; `answers` gets what
    `event.interrupt` returned (the response, on the resume)."""

    def __init__(self, runs: dict[str, int], answers: list[Any], gate: asyncio.Event | None, stuck: list[str]) -> None:
        self.runs, self.answers, self.gate, self.stuck = runs, answers, gate, stuck

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(_before_node_call(), self.before)
        if self.gate is not None:
            registry.add_callback(_after_node_call(), self.after)

    def after(self, event: Any) -> None:
        if event.node_id == "a" and self.gate is not None:
            self.gate.set()

    async def before(self, event: Any) -> None:
        if event.node_id != "b":
            return
        self.runs["b asked"] += 1
        if self.gate is not None:
            try:
                await asyncio.wait_for(self.gate.wait(), GATE_SECONDS)
            except asyncio.TimeoutError:
                self.stuck.append(f"a's node had not completed within {GATE_SECONDS:.0f} s while b's hook waited")
        self.answers.append(event.interrupt(ASK, reason={"branch": "b"}))


def build(folder: str, runs: dict[str, int], answers: list[Any], gate: asyncio.Event | None, stuck: list[str]) -> Any:
    """The graph both sides build, on a FileSessionManager over `folder` (a new one each time: it reads the stored
    state back as the graph is built); its join keeps the inputs it was given."""
    from strands.session.file_session_manager import FileSessionManager

    async def a() -> str:
        runs["a"] += 1
        return A_OUTPUT

    async def b() -> str:
        runs["b"] += 1
        return f"b:{answers[-1] if answers else None}"

    async def join() -> str:
        runs["join"] += 1
        return "joined"

    steps = {name: Said(name, fn) for name, fn in (("a", a), ("b", b), ("join", join))}
    session = FileSessionManager(session_id=SESSION, storage_dir=folder)
    hooks = [Ask(runs, answers, gate, stuck)]
    graph, _ = st_kit.build(steps, [("a", "join"), ("b", "join")], ["a", "b"], limit=10, session_manager=session, hooks=hooks)
    return graph, steps["join"]


def received(join: Said) -> list[dict[str, list[str]]]:
    """Per run of the join, the outputs its input quoted, by the node it names ("From <id>:" then "  - <agent>:
    <text>" lines, the graph's format)."""
    runs = []
    for texts in join.inputs:
        quoted: dict[str, list[str]] = {}
        node = None
        for text in texts:
            line = text.strip()
            if line.startswith("From ") and line.endswith(":"):
                node = line[len("From ") : -1]
                quoted[node] = []
            elif node is not None and text.startswith("  - "):
                quoted[node].append(line.split(": ", 1)[-1].strip())
        runs.append(dict(sorted(quoted.items())))
    return runs


def stored(folder: str) -> dict[str, Any] | None:
    """What the session holds of the graph (FileSessionManager.read_multi_agent): shown, and the writer's precondition."""
    from strands.session.file_session_manager import FileSessionManager

    state = FileSessionManager(session_id=SESSION, storage_dir=folder).read_multi_agent(SESSION, GRAPH)
    if state is None:
        return None
    internal = ((state.get("_internal_state") or {}).get("interrupt_state")) or {}
    return {
        "status": state.get("status"),
        "completed_nodes": sorted(state.get("completed_nodes") or []),
        "interrupted_nodes": sorted(state.get("interrupted_nodes") or []),
        "next_nodes_to_execute": sorted(state.get("next_nodes_to_execute") or []),
        "node_results": sorted(state.get("node_results") or {}),
        "interrupts": sorted(i.get("name") for i in (internal.get("interrupts") or {}).values()),
        "interrupt_activated": internal.get("activated"),
    }


def _interrupts(result: Any) -> list[dict[str, Any]]:
    return [{"id": i.id, "name": i.name} for i in (getattr(result, "interrupts", None) or [])]


def _status(result: Any) -> str | None:
    status = getattr(result, "status", None)
    return None if status is None else str(getattr(status, "value", status))


async def write(folder: str) -> dict[str, Any]:
    """Run until `b`'s hook asks with `a` done; what ran, what the result listed and what the session holds."""
    found = cannot()
    if found:
        return {"strands": _version(), "cannot": found}
    runs, answers, stuck = _counts(), list[Any](), list[str]()
    graph, _ = build(folder, runs, answers, asyncio.Event(), stuck)
    raised = result = None
    try:
        result = await st_kit.run(graph, {})
    except Exception as exc:  # noqa: BLE001 - what the framework did: the probe reads it
        raised = f"{type(exc).__name__}: {exc}"
    return {
        "strands": _version(),
        "cannot": {},
        "raises": raised,
        "status": _status(result),
        "interrupts": _interrupts(result),
        "runs": runs,
        "stored": stored(folder),
        "stuck": stuck,
    }


async def resume(folder: str, interrupts: list[dict[str, Any]]) -> dict[str, Any]:
    """Build the graph anew on the folder's session and answer each interrupt the writer's result listed: what
    ran here, what the join's input quoted, what b's hook got, the result's status and interrupts."""
    runs, answers = _counts(), list[Any]()
    read = raised = result = join = None
    try:  # the graph reads the stored state as it is built: a release that cannot read it says so here
        graph, join = build(folder, runs, answers, None, [])
    except Exception as exc:  # noqa: BLE001 - what the framework did: the probe grades it
        read = f"{type(exc).__name__}: {exc}"
    if read is None:
        task = [{"interruptResponse": {"interruptId": i["id"], "response": ANSWER}} for i in interrupts]
        try:
            result = await st_kit.run(graph, {}, task=task)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001
            raised = f"{type(exc).__name__}: {exc}"
    return {
        "read_raises": read,
        "raises": raised,
        "runs_on_resume": runs,
        "b_got": answers,
        "join_received": [] if join is None else received(join),
        "status": _status(result),
        "interrupts": [i["name"] for i in _interrupts(result)],
    }


def _version() -> str:
    from importlib.metadata import version

    return version("strands-agents")


if __name__ == "__main__":
    command, store = sys.argv[1:3]
    if command != "write":
        raise SystemExit(f"st_live.py: unknown command {command!r}")
    print(json.dumps(asyncio.run(write(store))))
