"""A live workflow run across releases: one interpreter leaves it paused mid-fan-out in a checkpoint folder, another
resumes it.

The writer runs as `python af_live.py write FOLDER` with an earlier release's interpreter (the contract's
EARLIER_PYTHON), or with the probe's own for the same-release control; it prints one JSON line. The workflow is
`start` -> fan-out to `a` and `b` -> fan-in to `join`, checkpointed in a FileCheckpointStorage on FOLDER (a
checkpoint at the end of every superstep): `a` sends its message; `b` waits until `a` has sent it (a gate, never a
clock) and then asks for input with `ctx.request_info`, so the superstep's checkpoint holds `a`'s message and `b`'s
request. The run then stops idle with the request pending; the writer reports the latest checkpoint. The resumer
builds the same workflow (same name and executor ids, so the same graph signature) on a new storage object on the
folder and answers with `run(checkpoint_id=..., responses=...)`, the documented resume. Both sides count their own
executor runs. Plain data only: the writer's side imports nothing of fanin's (af_kit is the suite's, framework only).

No `from __future__ import annotations`: `@response_handler` reads the request and response types from the
handler's annotations.
"""

import asyncio
import json
import sys
from typing import Any

import af_kit
from af_kit import Node
from agent_framework import WorkflowContext, response_handler

ANSWER = "approved"
REQUEST = "fanin-b"  # b's request id, chosen here so the resume answers it by name
NAME = "live"  # the workflow's name: the storage finds a run's checkpoints by it
GATE_SECONDS = 10.0  # only a hang guard: b is released by a's sent message


class Asking(Node):
    """`b`: its handler asks for input; its response handler sends `b:<answer>` on to the join."""

    def __init__(self, id: str, act: Any, runs: dict[str, int]) -> None:
        super().__init__(id, act)
        self._runs = runs

    @response_handler
    async def answer(self, request: str, response: str, ctx: WorkflowContext[str, Any]) -> None:
        self._runs["b answered"] = self._runs.get("b answered", 0) + 1
        await ctx.send_message(f"b:{response}")


def build(storage: Any, runs: dict[str, int], joined: list[Any], gate: asyncio.Event | None, stuck: list[str]) -> Any:
    """The workflow both sides build; `gate` (the writer's) is set once `a` has sent, and `b` asks only then
    (`stuck` says when the hang guard ran out instead)."""
    from agent_framework import WorkflowBuilder

    async def a(node_id: str, message: Any, ctx: Any) -> None:
        runs["a"] = runs.get("a", 0) + 1
        await ctx.send_message("a")
        if gate is not None:
            gate.set()

    async def b(node_id: str, message: Any, ctx: Any) -> None:
        runs["b"] = runs.get("b", 0) + 1
        if gate is not None:
            try:
                await asyncio.wait_for(gate.wait(), GATE_SECONDS)
            except asyncio.TimeoutError:
                stuck.append(f"a had not sent its message within {GATE_SECONDS:.0f} s while b waited")
        await ctx.request_info("approve b?", str, request_id=REQUEST)

    async def join(node_id: str, messages: Any, ctx: Any) -> None:
        runs["join"] = runs.get("join", 0) + 1
        joined.append(sorted(messages) if isinstance(messages, list) else [messages])
        await ctx.yield_output("joined")

    start, first, second, joiner = Node("start", af_kit.forward), Node("a", a), Asking("b", b, runs), Node("join", join)
    return (
        WorkflowBuilder(name=NAME, start_executor=start, checkpoint_storage=storage)
        .add_fan_out_edges(start, [first, second])
        .add_fan_in_edges([first, second], joiner)
        .build()
    )


def _holds(checkpoint: Any) -> dict[str, Any]:
    """Where the checkpoint keeps a's message (pending messages, or a fan-in buffer in the edge state) and which
    requests it holds: what the resume has to go on."""
    messages = [getattr(m, "data", m) for queued in checkpoint.messages.values() for m in queued]
    edges = checkpoint.state.get("_edge_state", {}) or {}
    buffered = [
        getattr(m, "data", m)
        for state in edges.values()
        for queued in ((state or {}).get("buffer", {}) or {}).values()
        for m in queued
    ]
    return {
        "messages": sorted(str(m) for m in messages),
        "fan_in_buffer": sorted(str(m) for m in buffered),
        "requests": sorted(checkpoint.pending_request_info_events),
    }


async def write(folder: str) -> dict[str, Any]:
    """Run until `b` asks for input with `a`'s message sent; the latest checkpoint and what ran, as plain data."""
    from agent_framework import FileCheckpointStorage

    runs: dict[str, int] = {}
    joined: list[Any] = []
    storage = FileCheckpointStorage(folder)
    stuck: list[str] = []
    workflow = build(storage, runs, joined, asyncio.Event(), stuck)
    trace = await af_kit.run(workflow, "go", catch=True)
    latest = await storage.get_latest(workflow_name=NAME)
    shapes = [_holds(checkpoint) for checkpoint in await storage.list_checkpoints(workflow_name=NAME)]
    return {
        "agent_framework": _version(),
        "checkpoint_id": None if latest is None else str(latest.checkpoint_id),
        "runs": runs,
        "joined": joined,
        "last_state": trace["last_state"],
        "raises": trace.get("raises"),
        "holds": None if latest is None else _holds(latest),
        # b asked only once a had sent: a superstep's checkpoint holds a's message beside b's request
        "asked_with_a": any(
            "a" in shape["messages"] + shape["fan_in_buffer"] and shape["requests"] for shape in shapes
        ),
        "stuck": stuck,
    }


async def resume(folder: str, checkpoint_id: str) -> dict[str, Any]:
    """Answer `b`'s request from the stored checkpoint, on a workflow built anew: what ran here, what the join got."""
    from agent_framework import FileCheckpointStorage

    runs: dict[str, int] = {}
    joined: list[Any] = []
    storage = FileCheckpointStorage(folder)
    raised = read = None
    try:  # a release that cannot read the stored checkpoint says so here: that is its answer, not a defect
        await storage.load(checkpoint_id)
    except Exception as exc:  # noqa: BLE001 - what the framework did: the probe grades it
        read = f"{type(exc).__name__}: {exc}"
    workflow = build(storage, runs, joined, None, [])
    start = {"checkpoint_id": checkpoint_id, "responses": {REQUEST: ANSWER}}
    trace = await af_kit.run(workflow, start=start, catch=True)
    if "raises" in trace:
        raised = f"{trace['raises']}: {trace['message']}"
    elif trace["failures"]:
        raised = f"{trace['failures'][0]['error_type']}: {trace['failures'][0]['message']}"
    # Not the run's last status: that moved on its own in 1.17.0 (idle, no longer idle with pending requests, once b
    # is answered), a change of the resume and not of the upgrade, and a bisect of the probe compares this value.
    return {
        "raises": raised,
        "read_raises": read,
        "runs_on_resume": {name: runs.get(name, 0) for name in ("a", "b", "b answered", "join")},
        "joined": joined,
    }


def _version() -> str:
    from importlib.metadata import version

    return version("agent-framework-core")


if __name__ == "__main__":
    command, store = sys.argv[1:3]
    if command != "write":
        raise SystemExit(f"af_live.py: unknown command {command!r}")
    import af_live  # the classes as `af_live.*`, not `__main__.*`: their names are in the graph signature

    print(json.dumps(asyncio.run(af_live.write(store))))
