"""Two entry points read-modify-write the invocation_state dict across an await: the lost update."""

from typing import Any

import st_kit
from fanin.probe import Claim, Observer, probe
from gates import IdleTurns

SRC = "https://github.com/strands-agents/sdk-python/blob/v1.62.0/src/strands/multiagent/graph.py"


async def _both_orders(obs: Observer) -> dict[str, Any]:
    if not await st_kit.passes_state():
        obs.not_applicable("the graph hands its nodes no invocation_state (the executor is called with the task alone)")
    runs: dict[str, Any] = {}
    for order in (["a", "b"], ["b", "a"]):
        turns = IdleTurns(order)

        def writer(name: str, turns: IdleTurns = turns) -> st_kit.StepFn:
            async def fn(fed: list[str], state: dict[str, Any] | None) -> None:
                assert state is not None
                seen = list(state["applied"])
                await turns.wait(name)
                state["applied"] = [*seen, name]
                turns.done(name)

            return fn

        state: dict[str, Any] = {"applied": []}
        graph, _ = st_kit.build({"a": st_kit.Step(writer("a")), "b": st_kit.Step(writer("b"))}, [], ["a", "b"], 20)
        with obs.framework():
            await st_kit.run(graph, state)
        obs.require_in_flight(turns)
        runs[" then ".join(order)] = {"finished": turns.acted, "applied": state["applied"]}
    return runs


@probe(
    "strands/invocation-state/lost-update",
    title="Entry points `a` and `b` each read `invocation_state['applied']`, await their turn, and write what"
    " they read plus their own name; both finishing orders",
    claim=Claim(
        "The graph passes the caller's invocation_state dict itself to every node of a batch, and runs the"
        " batch's nodes as concurrent tasks: a node that reads it, awaits and writes back overwrites its"
        " sibling's write (last writer wins). Precondition: both nodes in one batch (two entry points).",
        f"{SRC}#L826-L846",
        expect={"hazard": "silent"},
    ),
    sources=(f"{SRC}#L1035-L1062",),
)
async def test_lost_update(obs: Observer) -> None:
    runs = await _both_orders(obs)
    lost = sorted({f"{run}: {b}" for run, seen in runs.items() for b in ("a", "b") if b not in seen["applied"]})
    obs.record(
        {"runs": runs, "lost": lost},
        label=f"lost {len(lost)} of 4 updates" if lost else "every update kept",
        detail=f"invocation_state['applied'] after each order: {[r['applied'] for r in runs.values()]}",
        hazard="silent" if lost else "safe",
    )
