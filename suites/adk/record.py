"""`fanin record` for ADK: which agent wrote which state keys, event by event, in every agent run a test suite makes.

Installed in the user's own test process (fanin.project.record_plugin), it wraps one name and changes
nothing it does: `BaseAgent.run_async`, the entry every agent goes through (a Runner's, and a test's own
`agent.run_async(ctx)`). Only the outermost run of an invocation is recorded (its context's agent is the
agent itself; a sub-agent is run from its parent's context), and it sees every event of the tree below it,
ParallelAgent branches included: each event's author, branch and `state_delta` keys. A run is one
invocation of one agent tree, named by its root. A Workflow's nodes (ADK 2.x) run from the Workflow's
context and are not recorded. Anything the recording cannot read is left out, never raised into the test.
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

    def saw_event(self, agent: Any, context: Any, event: Any) -> None:
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
                author = str(getattr(event, "author", "") or "?")
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


def install(recording: Recording) -> list[str]:
    """Wrap BaseAgent.run_async; the names wrapped (none where ADK lacks it)."""
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
    return ["BaseAgent.run_async"]


def _shape(agent: Any) -> tuple[Any, ...]:
    """What makes two trees one: every agent's name and class, depth first (a factory builds one per test)."""
    children = getattr(agent, "sub_agents", None) or []
    return (str(getattr(agent, "name", "?")), type(agent).__name__, tuple(_shape(c) for c in children))


def runs_by_graph(recording: Recording) -> list[tuple[Any, list[dict[str, Any]]]]:
    """Each agent tree that ran with its runs (invocations), the runs of one shape together, by the root's name."""
    grouped: dict[Any, tuple[Any, list[dict[str, Any]]]] = {}
    for (root, _, _), run in recording.runs.items():
        tree = recording.graphs.get(root)
        grouped.setdefault(_shape(tree) if tree is not None else root, (tree, []))[1].append(run)
    return sorted(grouped.values(), key=lambda item: str(item[1][0]["root"]))
