"""A live thread across releases: one interpreter leaves a thread mid-fan-out in a durable store, another resumes it.

The writer runs as `python lg_live.py write BACKEND TARGET THREAD` with an earlier release's interpreter (the
contract's EARLIER_PYTHON), or forked from the probe's own process for the same-release control; it prints one
JSON line. The graph is START -> `a` and `b` in parallel -> `join` (a list edge): `a` returns, `b` waits until
`a`'s write is saved (a gate on the saver, never a clock) and then asks for input with `interrupt()`; the writer
returns once the run has stopped there. The resumer builds the same graph (same node names, so the same task ids)
on the same store and answers with `Command(resume=...)`. Both sides count their own node runs. Plain data only:
the writer's side imports nothing of fanin's.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from typing import Any

import lg_procs

ANSWER = "approved"
GATE_SECONDS = 10.0  # only a hang guard: b is released by a's saved write


def builder(runs: dict[str, int], hold_b: Callable[[], None] | None) -> Any:
    """The graph both sides build; `hold_b` (the writer's) runs in `b` before its interrupt."""
    from langgraph.graph import START, StateGraph
    from langgraph.types import interrupt

    def a(state: lg_procs.State) -> dict:
        runs["a"] = runs.get("a", 0) + 1
        return {"items": ["a"]}

    def b(state: lg_procs.State) -> dict:
        runs["b"] = runs.get("b", 0) + 1
        if hold_b is not None:
            hold_b()
        answer = interrupt("approve b?")
        return {"items": [f"b:{answer}"]}

    def join(state: lg_procs.State) -> dict:
        runs["join"] = runs.get("join", 0) + 1
        return {"items": ["join"]}

    graph = StateGraph(lg_procs.State)
    graph.add_node("a", a)
    graph.add_node("b", b)
    graph.add_node("join", join)
    graph.add_edge(START, "a")
    graph.add_edge(START, "b")
    graph.add_edge(["a", "b"], "join")
    return graph


def write(backend: str, target: str, thread: str) -> dict[str, Any]:
    """Run until `b` asks for input with `a` done and saved; what the run did, as plain data."""
    runs: dict[str, int] = {}
    a_saved = threading.Event()
    stuck: list[str] = []

    def on_put_writes(writes: list) -> None:
        if ("items", ["a"]) in [tuple(write) for write in writes]:
            a_saved.set()

    def hold_b() -> None:
        if runs["b"] == 1 and not a_saved.wait(GATE_SECONDS):
            stuck.append(f"a's write was not saved within {GATE_SECONDS:.0f} s while b waited")

    config = {"configurable": {"thread_id": thread}}
    with lg_procs.saver(backend, target, on_put_writes) as saver:
        graph = builder(runs, hold_b).compile(checkpointer=saver)
        graph.invoke({"items": []}, config)
        snapshot = graph.get_state(config)
    return {
        "langgraph": _version(),
        "runs": runs,
        "next": sorted(snapshot.next),
        "a_saved": a_saved.is_set(),
        "stuck": stuck,
    }


def resume(backend: str, target: str, thread: str) -> dict[str, Any]:
    """Answer `b`'s interrupt on the stored thread; what this process ran and what the thread holds after."""
    from langgraph.types import Command

    runs: dict[str, int] = {}
    config = {"configurable": {"thread_id": thread}}
    raised = None
    with lg_procs.saver(backend, target) as saver:
        graph = builder(runs, None).compile(checkpointer=saver)
        try:
            graph.invoke(Command(resume=ANSWER), config)
        except Exception as exc:  # noqa: BLE001 - what the framework did: the probe grades it
            raised = type(exc).__name__
        try:  # a saver that cannot load the stored checkpoint fails here too: that is its answer, not a defect
            snapshot = graph.get_state(config)
            final, after, read = list(snapshot.values.get("items", [])), sorted(snapshot.next), None
        except Exception as exc:  # noqa: BLE001
            final, after, read = None, None, type(exc).__name__
    return {
        "raises": raised,
        "read_raises": read,
        "runs_on_resume": {name: runs.get(name, 0) for name in ("a", "b", "join")},
        "final": final,
        "next": after,
    }


def _version() -> str:
    from importlib.metadata import version

    return version("langgraph")


def forked_write(backend: str, target: str, thread: str, conn: Any) -> None:
    """lg_procs.fork's target: `write` in a forked process, its answer over the pipe."""
    conn.send(("written", write(backend, target, thread)))


if __name__ == "__main__":
    command, backend_name, store, thread_id = sys.argv[1:5]
    if command != "write":
        raise SystemExit(f"lg_live.py: unknown command {command!r}")
    print(json.dumps(write(backend_name, store, thread_id)))
