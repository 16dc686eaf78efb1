"""update_state and forking around a parallel superstep."""

import operator
from collections.abc import Callable
from typing import Annotated, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph

import lg_persist
from fanin.probe import Claim, Observer, probe


CLAIM_TEXT = (
    "update_state(config, values, as_node=...) applies the update as if that node had written it and"
    " creates a new checkpoint from which the graph continues; invoking with an earlier checkpoint's"
    " config re-executes the steps after it on a new fork."
)
TIME_TRAVEL_DOC = "https://docs.langchain.com/oss/python/langgraph/use-time-travel"
UPDATE_STATE_DOC = "https://docs.langchain.com/oss/python/langgraph/persistence#update-state"
EXPECT = {"value.update_as_a.final": ["a-patched", "b", "join"], "value.fork.final": ["a", "b", "join"]}


@probe(
    "langgraph/update-state/parallel-step",
    title="After a run of `a` and `b` in parallel then join, the join behind a list-edge barrier"
    " (add_edge([\"a\", \"b\"], \"join\")): update_state(as_node=\"a\") on the checkpoint before the parallel step"
    " and resume from it, and invoke again from that checkpoint (fork)",
    claim=Claim(
        CLAIM_TEXT + " Here the join waits for both branches through a list edge (a barrier);"
        " the separate-edges form is langgraph/update-state/parallel-step-separate-edges.",
        TIME_TRAVEL_DOC,
        expect=EXPECT,
    ),
    sources=[UPDATE_STATE_DOC],
    backends=("memory", "sqlite", "postgres"),
    modes=("sync", "async"),
)
def test_parallel_step(obs: Observer) -> None:
    update_parallel_step(obs, barrier=True)


@probe(
    "langgraph/update-state/parallel-step-separate-edges",
    title="parallel-step with the join reached by two separate edges (a -> join, b -> join) instead of a list-edge"
    " barrier: update_state(as_node=\"a\") on the checkpoint before the parallel step and resume, and fork",
    claim=Claim(
        CLAIM_TEXT + " Here each branch has its own edge to the join (no barrier).",
        TIME_TRAVEL_DOC,
        expect=EXPECT,
    ),
    sources=[UPDATE_STATE_DOC],
    backends=("memory", "sqlite", "postgres"),
    modes=("sync", "async"),
)
def test_parallel_step_separate_edges(obs: Observer) -> None:
    update_parallel_step(obs, barrier=False)


def update_parallel_step(obs: Observer, barrier: bool) -> None:
    """The scenario of both probes; `barrier` picks the join's edges: one list edge, or one edge per branch
    (the barrier decides whether the join can run at all once b's task is gone)."""

    class State(TypedDict):
        items: Annotated[list, operator.add]

    ran: list = []
    join_saw: list = []

    def writer(name: str) -> Callable[..., dict]:
        """Each node records its superstep and writes its name; the join also records what it saw."""

        def node(state: State, config: RunnableConfig) -> dict:
            ran.append([config["metadata"]["langgraph_step"], name])
            if name == "join":
                join_saw.append(sorted(state["items"]))
            return {"items": [name]}

        return node

    builder = StateGraph(State)
    for name in ("a", "b", "join"):
        builder.add_node(name, writer(name))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    if barrier:
        builder.add_edge(["a", "b"], "join")
    else:
        builder.add_edge("a", "join")
        builder.add_edge("b", "join")
    config = {"configurable": {"thread_id": "update-state"}}

    def part(action: Callable[[], dict]) -> dict:
        ran.clear()
        join_saw.clear()
        result = obs.attempt(action)
        returned = result.get("returned") or {}
        items = returned.get("items")
        return {
            "outcome": result.get("raises", "returned"),
            **({"next_after_update": returned["next_after_update"]} if "next_after_update" in returned else {}),
            "ran": sorted([step - min(s for s, _ in ran), name] for step, name in ran),  # steps counted from the first
            "join_saw": list(join_saw),
            "final": sorted(items) if items is not None else None,
        }

    with lg_persist.checkpointer(obs) as saver:
        run = lg_persist.driven(obs, builder.compile(checkpointer=saver))
        with obs.framework():
            run.invoke({"items": []}, config)
            history = run.history(config)
        before = [s for s in history if sorted(s.next) == ["a", "b"]]
        if not before:
            obs.vacuous(f"no checkpoint had next == [a, b]; nexts were {[sorted(s.next) for s in history]}")
        fork_point = before[0].config

        def update_then_resume() -> dict:
            patched = run.update_state(fork_point, {"items": ["a-patched"]}, as_node="a")
            next_after_update = sorted(run.get_state(patched).next)
            output = run.invoke(None, patched)
            return {"items": output.get("items"), "next_after_update": next_after_update}

        update_as_a = part(update_then_resume)
        fork = part(lambda: run.invoke(None, fork_point))
        latest = run.get_state(config).values.get("items")

    def problem(seen: dict) -> str:
        final = seen["final"] or []
        if seen["outcome"] != "returned":
            return seen["outcome"]
        doubled = sorted({item for item in final if final.count(item) > 1})
        if doubled:
            return f"doubles {', '.join(doubled)}"
        as_a = [item for item in final if item.startswith("a")]
        if len(as_a) > 1:
            return "a applied twice"
        if "b" not in final:
            return "drops b"
        if len(seen["join_saw"]) != 1:
            return f"join ×{len(seen['join_saw'])}"
        return ""

    problems = {name: problem(seen) for name, seen in (("update", update_as_a), ("fork", fork))}
    broken = [f"{name}: {what}" for name, what in problems.items() if what]
    lost = sorted(
        f"{name}: {item}"
        for name, seen in (("update", update_as_a), ("fork", fork))
        for item in ("b", "join")
        if seen["outcome"] == "returned" and item not in (seen["final"] or [])
    )
    obs.record(
        {"update_as_a": update_as_a, "fork": fork, "latest_on_thread": sorted(latest or []), "lost": lost},
        label="; ".join(broken) if broken else "update and fork each complete",
        detail=f"update_state(as_node=a) then resume: ran {update_as_a['ran']}, join saw {update_as_a['join_saw']},"
        f" final {update_as_a['final']}; fork: ran {fork['ran']}, join saw {fork['join_saw']}, final {fork['final']}",
        hazard="silent" if broken else "safe",
    )
