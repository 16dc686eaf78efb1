"""Parallel executors writing one shared-state key (`ctx.set_state`) in the same superstep."""

from typing import Any

from agent_framework import WorkflowBuilder

import af_kit
from af_kit import Node, forward
from fanin.probe import Claim, Observer, probe
from gates import Turns

SRC = "https://github.com/microsoft/agent-framework/blob/python-1.0.0/python/packages/core/agent_framework/_workflows"


@probe(
    "agent_framework/same-key/last-writer",
    title="Two executors fanned out from `start` set one shared-state key in the same superstep; a fan-in"
    " reads it; both finishing orders forced",
    claim=Claim(
        "set_state writes to one pending buffer shared by the superstep, committed at its boundary: when"
        " executors running concurrently write the same key, the last write wins, with no error.",
        f"{SRC}/_state.py#L30-L43",
        expect={"value.a then b.final": "B", "value.b then a.final": "A", "hazard": "silent"},
    ),
)
async def test_last_writer(obs: Observer) -> None:
    runs: dict[str, dict[str, Any]] = {}
    for order in (["a", "b"], ["b", "a"]):
        turns = Turns(order)
        seen: dict[str, object] = {}

        async def write(node_id: str, message: str, ctx: Any) -> None:
            await turns.wait(node_id)
            ctx.set_state("value", node_id.upper())
            turns.done(node_id)
            await ctx.send_message(node_id)

        async def join(node_id: str, messages: list[str], ctx: Any) -> None:
            seen["final"] = ctx.get_state("value")

        start, a, b, joiner = Node("start", forward), Node("a", write), Node("b", write), Node("join", join)
        workflow = (
            WorkflowBuilder(start_executor=start).add_fan_out_edges(start, [a, b]).add_fan_in_edges([a, b], joiner).build()
        )
        with obs.framework():
            trace = await af_kit.run(workflow)
        obs.require_in_flight(turns)
        obs.require_same_step({name: trace["steps"][name][0] for name in ("a", "b")}, expected=2, what="writers")
        final = seen.get("final")
        runs[" then ".join(order)] = {
            "finished": turns.acted,
            "final": final,
            "lost": [name.upper() for name in ("a", "b") if name.upper() != final],
        }
    lost = sorted({w for r in runs.values() for w in r["lost"]})
    last = all(r["final"] == r["finished"][-1].upper() for r in runs.values())
    rule = "last finisher wins" if last else "first finisher wins" if all(
        r["final"] == r["finished"][0].upper() for r in runs.values()
    ) else "other"
    obs.record(
        {**runs, "lost": lost, "rule": rule},
        label=f"{rule}, no error" if lost else "both kept",
        detail=f"no error; the key holds {[r['final'] for r in runs.values()]} after the orders"
        f" {list(runs)}: {rule}",
        hazard="silent" if lost else "safe",
    )


@probe(
    "agent_framework/same-key/read-modify-write",
    title="Two parallel executors each read a shared counter and set it to what they read + 1: both reading"
    " before either writes, then `b` reading after `a` wrote (same superstep)",
    claim=Claim(
        "All executors in a superstep see the same committed state at the start of it; get_state reads the"
        " superstep's pending buffer first. Two increments read before either write lose one; a read after a"
        " sibling's write in the same superstep sees that uncommitted write.",
        f"{SRC}/_state.py#L30-L60",
        expect={"value.both read first.final": 1, "value.b reads after a wrote.reads.b": 1},
    ),
)
async def test_read_modify_write(obs: Observer) -> None:
    runs: dict[str, dict[str, Any]] = {}
    for case in ("both read first", "b reads after a wrote"):
        turns = Turns(["a", "b"])
        reads: dict[str, Any] = {}
        seen: dict[str, object] = {}

        async def seed(node_id: str, message: str, ctx: Any) -> None:
            ctx.set_state("count", 0)
            await ctx.send_message(node_id)

        async def increment(node_id: str, message: str, ctx: Any, case: str = case, turns: Turns = turns, reads: dict[str, Any] = reads) -> None:
            if case == "both read first":
                reads[node_id] = ctx.get_state("count")
                await turns.wait(node_id)
            else:
                await turns.wait(node_id)
                reads[node_id] = ctx.get_state("count")
            ctx.set_state("count", reads[node_id] + 1)
            turns.done(node_id)
            await ctx.send_message(node_id)

        async def join(node_id: str, messages: list[str], ctx: Any, seen: dict[str, Any] = seen) -> None:
            seen["final"] = ctx.get_state("count")

        start, a, b, joiner = Node("start", seed), Node("a", increment), Node("b", increment), Node("join", join)
        workflow = (
            WorkflowBuilder(start_executor=start).add_fan_out_edges(start, [a, b]).add_fan_in_edges([a, b], joiner).build()
        )
        with obs.framework():
            trace = await af_kit.run(workflow)
        obs.require_in_flight(turns)
        obs.require_same_step({name: trace["steps"][name][0] for name in ("a", "b")}, expected=2, what="writers")
        final = seen.get("final")
        runs[case] = {"reads": reads, "final": final, "lost_increments": 2 - final if isinstance(final, int) else 2}
    lost = [f"{case}: {r['lost_increments']} increment(s)" for case, r in runs.items() if r["lost_increments"]]
    obs.record(
        {**runs, "lost": lost},
        label=f"counter {runs['both read first']['final']} / {runs['b reads after a wrote']['final']} of 2",
        detail=f"no error; both read first: reads {runs['both read first']['reads']}, counter"
        f" {runs['both read first']['final']}; b reads after a wrote: reads {runs['b reads after a wrote']['reads']},"
        f" counter {runs['b reads after a wrote']['final']}",
        hazard="silent" if lost else "safe",
    )
