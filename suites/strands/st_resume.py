"""Strands' `pause` and `resume` for its scenario adapter (docs/ADAPTERS.md): a graph's interrupt and its session.

A paused branch asks the way Strands lets a graph ask a person before a node runs: a `BeforeNodeCallEvent` hook
(`GraphBuilder.set_hook_providers`) whose callback, for a pausing branch's node, runs the branch's steps up to its
pause (its turn) and there calls `event.interrupt(name, reason)`, which raises the SDK's InterruptException the first
time: the graph marks the node INTERRUPTED, lets the batch's other nodes finish and returns a result whose status is
INTERRUPTED, its `interrupts` listed. The stopped run is resumed from the graph's store: the graph is built with a
FileSessionManager (`set_session_manager`), which persists the graph's state (`Graph.serialize_state()`: completed,
failed and interrupted nodes, their results, the interrupt state) after each node and run; a second graph, built the
same way on a new FileSessionManager over the same directory (a second worker), reads it back and is invoked with one
`interruptResponse` per interrupt after a pause, the task again after a failure (the session's `next_nodes_to_execute`
run). On resume the hook's `event.interrupt(...)` returns the response, which the node's pause answers. The session
stores no `invocation_state` (where the branches' keys are): the resumed run is given the dict the caller holds.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import scenario_kit


def cannot() -> dict[str, str]:
    """Why this release cannot pause or resume a graph, read from the installed package (empty when it can)."""
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


def _before_node_call() -> Any:
    """The hook event before a graph node runs: strands.hooks's, or the experimental one of earlier releases."""
    import importlib

    for module in ("strands.hooks", "strands.experimental.hooks.multiagent"):
        try:
            event = getattr(importlib.import_module(module), "BeforeNodeCallEvent", None)
        except ImportError:
            continue
        if event is not None:
            return event
    return None


def pauses(script: scenario_kit.Script) -> bool:
    """Whether any branch of the scenario pauses (its first node is then interrupted by the hook)."""
    return any("pause" in steps for parts in script.steps.values() for steps in parts)


def ask_key(name: str) -> str:
    """The interrupt's name for branch `name` (unique across the hook's callbacks)."""
    return f"fanin-pause-{name}"


class Asks:
    """The hook provider: before a pausing branch's first node, its steps up to the pause, which interrupts."""

    def __init__(self, script: scenario_kit.Script, owner: dict[str, str]) -> None:
        self.script = script
        self.owner = owner  # node id -> branch name

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(_before_node_call(), self.before)

    async def before(self, event: Any) -> None:
        name = self.owner.get(event.node_id)
        if name is None or event.node_id != name or "pause" not in self.script.steps[name][0]:
            return
        if self.script.resuming:  # the response the resumed graph was given: the node's pause answers it
            self.script.answers[name] = event.interrupt(ask_key(name), reason={"branch": name})
            return
        box: dict[str, Any] = event.invocation_state if event.invocation_state is not None else {}
        pause = lambda n: event.interrupt(ask_key(n), reason={"branch": n})  # noqa: E731
        await self.script.branch(name, read=box.__getitem__, write=box.__setitem__, pause=pause)
        raise RuntimeError(f"branch {name} did not pause in the hook")


def answer(script: scenario_kit.Script) -> scenario_kit.Pauser:
    """A paused branch's pause in its node once resumed: the response its hook's interrupt returned."""
    return lambda name: script.answers[name]


def responses(result: Any) -> Any:
    """What the resumed graph is invoked with: one interruptResponse per interrupt, or (after a failure) the task."""
    interrupts = list(getattr(result, "interrupts", None) or [])
    if not interrupts:
        return "go"
    return [{"interruptResponse": {"interruptId": i.id, "response": scenario_kit.ANSWER}} for i in interrupts]
