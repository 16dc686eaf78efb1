"""`fanin record` for ADK: which agent wrote which state keys, event by event, in every agent run a test suite makes.

Installed in the user's own test process (fanin.project.record_plugin), it wraps one name and changes
nothing it does: `BaseAgent.run_async`, the entry every agent goes through (a Runner's, and a test's own
`agent.run_async(ctx)`). Only the outermost run of an invocation is recorded (its context's agent is the
agent itself; a sub-agent is run from its parent's context), and it sees every event of the tree below it,
ParallelAgent branches included: each event's author, branch and `state_delta` keys. A run is one
invocation of one agent tree, named by its root. A Workflow (ADK 2.x) runs through the node runner, not
`BaseAgent.run_async`: `_node_runner_utils.run_node_async`, which `Runner.run_async` calls for a node root,
is wrapped too, and a Workflow root's events (each node's author and `state_delta` keys) are its run; an
agent root on that path is left to the agents' wrapper. Anything the recording cannot read is left out,
never raised into the test.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

HIDDEN = ("temp:",)  # keys ADK never persists, as the dry run leaves them out


class Recording:
    """Every run seen, by its tree's root and invocation; the trees that ran, by their root."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: dict[tuple[int, str, str], dict[str, Any]] = {}
        self.graphs: dict[int, Any] = {}  # id(root) -> root, held until the end: ids stay unique
        self.test = ""  # the pytest node id running now (set by the plugin)
        self.errors: list[str] = []

    def saw_event(self, agent: Any, context: Any, event: Any, author: str | None = None) -> None:
        try:
            root = _root(agent)
            delta = getattr(getattr(event, "actions", None), "state_delta", None) or {}
            keys = sorted(str(k) for k in delta if not str(k).startswith(HIDDEN))
            invocation = str(getattr(event, "invocation_id", "") or getattr(context, "invocation_id", ""))
            with self.lock:
                self.graphs.setdefault(id(root), root)
                run = self.runs.setdefault(
                    (id(root), invocation, self.test),
                    {"root": str(getattr(root, "name", "?")), "test": self.test, "invocation": invocation, "writes": [], "authors": []},
                )
                run["events"] = run.get("events", 0) + 1
                author = author or str(getattr(event, "author", "") or "?")
                if author not in run["authors"]:
                    run["authors"].append(author)
                if keys:
                    run["writes"].append(
                        {
                            "step": run["events"],
                            "node": author,
                            "branch": str(getattr(event, "branch", "") or ""),
                            "keys": keys,
                        }
                    )
        except Exception as exc:  # noqa: BLE001 - recording never breaks the user's run
            self.errors.append(f"{type(exc).__name__}: {exc}"[:200])


def _root(agent: Any) -> Any:
    """The tree's root: where `parent_agent` ends."""
    seen = set()
    while getattr(agent, "parent_agent", None) is not None and id(agent) not in seen:
        seen.add(id(agent))
        agent = agent.parent_agent
    return agent


def _is_workflow(node: Any) -> bool:
    """A 2.x Workflow (by class name, as the inspector reads it): a graph of nodes, not an agent."""
    return any(c.__name__ == "Workflow" for c in type(node).__mro__) and hasattr(node, "edges")


def _workflow_node(event: Any) -> str | None:
    """The Workflow's own node an event comes from: the second segment of `node_info.path` ("wf@1/market@1"),
    its run number cut (a node's state writes are authored by the Workflow itself); None for the Workflow's."""
    path = str(getattr(getattr(event, "node_info", None), "path", "") or "")
    parts = path.split("/")
    return parts[1].split("@")[0] if len(parts) > 1 else None


def _install_workflows(recording: Recording) -> list[str]:
    """Wrap the node runner's entry (ADK 2.x); the names wrapped (none before 2.0)."""
    try:
        module = importlib.import_module("google.adk.workflow._node_runner_utils")
    except ImportError:
        return []
    original = getattr(module, "run_node_async", None)
    if original is None or getattr(original, "fanin_recording", False):
        return []

    async def run_node_async(runner: Any, *args: Any, **kwargs: Any) -> Any:
        node = kwargs.get("node") or getattr(runner, "agent", None)  # a node root is the runner's own
        events = original(runner, *args, **kwargs)
        try:
            async for event in events:
                if node is not None and _is_workflow(node) and getattr(event, "author", None) != "user":
                    recording.saw_event(node, None, event, _workflow_node(event))
                yield event
        finally:
            await events.aclose()

    run_node_async.fanin_recording = True  # type: ignore[attr-defined]
    run_node_async.__doc__ = original.__doc__
    setattr(module, "run_node_async", run_node_async)  # noqa: B010 (a module attribute mypy cannot see)
    return ["_node_runner_utils.run_node_async"]


def install(recording: Recording) -> list[str]:
    """Wrap BaseAgent.run_async and, from 2.0, the node runner's entry; the names wrapped (none where ADK lacks them)."""
    try:
        module = importlib.import_module("google.adk.agents.base_agent")
    except ImportError:
        return []
    base = getattr(module, "BaseAgent", None)
    original = getattr(base, "run_async", None)
    if original is None or getattr(original, "fanin_recording", False):
        return []

    async def run_async(self: Any, parent_context: Any, *args: Any, **kwargs: Any) -> Any:
        outermost = getattr(parent_context, "agent", None) is self
        events = original(self, parent_context, *args, **kwargs)
        try:
            async for event in events:
                if outermost:
                    recording.saw_event(self, parent_context, event)
                yield event
        finally:
            await events.aclose()

    run_async.fanin_recording = True  # type: ignore[attr-defined]
    run_async.__doc__ = original.__doc__
    base.run_async = run_async  # type: ignore[union-attr]
    return ["BaseAgent.run_async", *_install_workflows(recording)]


def _shape(agent: Any) -> tuple[Any, ...]:
    """What makes two trees one: every agent's name and class, depth first (a factory builds one per test);
    a Workflow's: its name and its edges' node names, as written."""
    if _is_workflow(agent):
        return (str(getattr(agent, "name", "?")), "Workflow", repr(_edge_names(getattr(agent, "edges", None))))
    children = getattr(agent, "sub_agents", None) or []
    return (str(getattr(agent, "name", "?")), type(agent).__name__, tuple(_shape(c) for c in children))


def _edge_names(element: Any) -> Any:
    """A Workflow's edges with each node as its name: two builds of one graph compare equal."""
    if isinstance(element, (list, tuple)):
        return [_edge_names(e) for e in element]
    if isinstance(element, dict):
        return {str(k): _edge_names(v) for k, v in element.items()}
    return element if isinstance(element, str) else str(getattr(element, "name", None) or getattr(element, "__name__", "?"))


def runs_by_graph(recording: Recording) -> list[tuple[Any, list[dict[str, Any]]]]:
    """Each agent tree that ran with its runs (invocations), the runs of one shape together, by the root's name."""
    grouped: dict[Any, tuple[Any, list[dict[str, Any]]]] = {}
    for (root, _, _), run in recording.runs.items():
        tree = recording.graphs.get(root)
        grouped.setdefault(_shape(tree) if tree is not None else root, (tree, []))[1].append(run)
    return sorted(grouped.values(), key=lambda item: str(item[1][0]["root"]))
