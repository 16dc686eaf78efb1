"""The fixes for Strands' partial-data join (edge conditions that wait for every source) and for the lost update
on the shared invocation_state (a lock held across the read, the await and the write; one key per node)."""

import asyncio
from typing import Any

from strands.multiagent.graph import GraphBuilder

import st_kit
from fanin.probe import Claim, Observer, probe
from gates import IdleTurns, settle
from mitigation import judge, words

DOCS = "https://strandsagents.com/latest/documentation/docs/user-guide/concepts/multi-agent/graph/"
SRC = "https://github.com/strands-agents/sdk-python/blob/v1.62.0/src/strands/multiagent/graph.py"


def _all_done(*sources: str) -> Any:
    """The documented edge condition: traverse only once every named source has completed."""

    def condition(state: Any) -> bool:
        return set(sources) <= {node.node_id for node in state.completed_nodes}

    return condition


async def _gated_join(join_first: bool) -> dict[str, Any]:
    """a -> join, b -> b2 -> join with both join edges conditioned on a and b2 completed; b2 holds as in
    strands/join/unequal-depth (until the join started or nothing else can run)."""
    turns = IdleTurns(["a", "b"])
    started = asyncio.Event()
    finished: list[str] = []
    early: list[bool] = []

    def entry(name: str) -> st_kit.StepFn:
        async def fn(fed: list[str], state: dict[str, Any] | None) -> None:
            await turns.wait(name)
            turns.done(name)

        return fn

    async def b2(fed: list[str], state: dict[str, Any] | None) -> None:
        for _ in range(3):
            if started.is_set():
                break
            await settle()
        finished.append("b2")

    async def join(fed: list[str], state: dict[str, Any] | None) -> None:
        early.append("b2" not in finished)
        started.set()

    steps = {"a": st_kit.Step(entry("a")), "b": st_kit.Step(entry("b"))}
    tail = {"join": st_kit.Step(join), "b2": st_kit.Step(b2)}
    steps.update(tail if join_first else dict(reversed(list(tail.items()))))
    builder = GraphBuilder()
    for name, step in steps.items():
        builder.add_node(step, name)
    condition = _all_done("a", "b2")
    builder.add_edge("a", "join", condition=condition)
    builder.add_edge("b", "b2")
    builder.add_edge("b2", "join", condition=condition)
    builder.set_entry_point("a")
    builder.set_entry_point("b")
    if hasattr(builder, "set_max_node_executions"):
        builder.set_max_node_executions(20)
    graph = builder.build()
    await st_kit.run(graph)
    fed = [sorted(f) for f in steps["join"].fed]
    kept = sorted({source for f in fed for source in f})
    wrong = [f"join run {i + 1} before b2 ended" for i, e in enumerate(early) if e]
    wrong += [f"join ran {len(fed)} times"] if len(fed) > 1 else []
    return {"made": ["a", "b2"], "kept": kept, "result": fed, "wrong": wrong, "observed": {"together": not turns.vacuous}}


@probe(
    "strands/join/unequal-depth-mitigated",
    title="strands/join/unequal-depth with both of the join's edges conditioned on `a` and `b2` having"
    " completed (the documented 'wait for all dependencies' condition); the join added before and after `b2`",
    claim=Claim(
        "Precondition: the join's sources are known when the graph is built. An edge whose condition holds only"
        " once every source is in state.completed_nodes is not traversed after `a` alone, so the join runs once,"
        " after b2, with both inputs, in either insertion order.",
        DOCS,
        expect={"hazard": "safe", "value.lost": []},
    ),
    sources=(f"{SRC}#L975-L992",),
)
async def test_unequal_depth_mitigated(obs: Observer) -> None:
    runs: dict[str, Any] = {}
    with obs.framework():
        for name, first in (("join added first", True), ("join added last", False)):
            runs[name] = await _gated_join(first)
    value, hazard = judge({"all-dependencies-condition": runs})
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)


async def _writers(variant: str, order: list[str]) -> dict[str, Any]:
    """Entry points a and b each add their name to the shared state across an await (their turn)."""
    turns = IdleTurns(order)
    lock = asyncio.Lock()

    def writer(name: str) -> st_kit.StepFn:
        async def fn(fed: list[str], state: dict[str, Any] | None) -> None:
            assert state is not None
            if variant == "lock":
                async with state["lock"]:
                    seen = list(state["applied"])
                    await turns.wait(name)
                    state["applied"] = [*seen, name]
            else:
                await turns.wait(name)
                state[f"applied.{name}"] = [name]
            turns.done(name)

        return fn

    state: dict[str, Any] = {"applied": [], "lock": lock}
    graph, _ = st_kit.build({"a": st_kit.Step(writer("a")), "b": st_kit.Step(writer("b"))}, [], ["a", "b"], 20)
    await st_kit.run(graph, state)
    if variant == "lock":
        kept = list(state["applied"])
    else:
        kept = [w for key in ("applied.a", "applied.b") for w in state.get(key, [])]
    # Under the lock the node that takes it first finishes first: the entry points' start order, a set's hash
    # order, not the gate's. So only own-keys shows the finishing order (the gate's).
    shown = {} if variant == "lock" else {"observed": {"finished": turns.acted}}
    return {"made": ["a", "b"], "kept": kept, "result": sorted(kept), **shown}


@probe(
    "strands/invocation-state/lost-update-mitigated",
    title="strands/invocation-state/lost-update with an asyncio.Lock kept in invocation_state held across the"
    " read, the await and the write, or with each node writing its own key; both finishing orders",
    claim=Claim(
        "Precondition: every node that updates the shared dict takes the lock (or owns its key). Under the lock"
        " the second node reads after the first wrote; with one key per node no write overwrites another: every"
        " update kept, in both orders.",
        f"{SRC}#L826-L846",
        expect={"hazard": "safe", "value.lost": []},
    ),
)
async def test_lost_update_mitigated(obs: Observer) -> None:
    if not await st_kit.passes_state():
        obs.not_applicable("the graph hands its nodes no invocation_state (the executor is called with the task alone)")
    variants: dict[str, Any] = {}
    with obs.framework():
        for variant in ("lock", "own-keys"):
            variants[variant] = {" then ".join(o): await _writers(variant, o) for o in (["a", "b"], ["b", "a"])}
    value, hazard = judge(variants)
    label, detail = words(value, hazard)
    obs.record(value, label=label, detail=detail, hazard=hazard)
