"""Mitigations of the join hazards: a fan-in node that runs early, twice, or never.

Every probe id is its hazard probe's id plus `-mitigated`; reference/mitigations.toml names it. A
write counts as kept when every run of the join saw it (a join that runs on partial state has not
seen it); a join that does not run exactly once is recorded as wrong. The compared result of a run
is how often the join ran; what it saw is shown beside it.
"""

import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

import lg_modes
from fanin.probe import Claim, Observer, probe
from mitigation import judge, words

DEFER_DOC = "https://docs.langchain.com/oss/python/langgraph/graph-api-control-flow#defer-node-execution"
NO_DEFER = "StateGraph.add_node has no parameter 'defer' in this version"
JOINED = "join runs once, sees every write"


def has_defer() -> bool:
    import inspect

    return "defer" in inspect.signature(StateGraph.add_node).parameters


def joined(made: list[str], join_runs: list[list], join: str = "join") -> dict:
    """A run's writes against what the join saw: kept = seen by every join run; wrong = not exactly one run."""
    kept = [w for w in made if join_runs and all(w in saw for saw in join_runs)]
    wrong = [f"{join} ran {len(join_runs)} times"] if len(join_runs) != 1 else []
    return {
        "made": made,
        "kept": kept,
        "wrong": wrong,
        "result": {f"{join}_runs": len(join_runs)},
        "observed": {f"{join}_saw": join_runs},
    }


@probe(
    "langgraph/join/separate-edges-mitigated",
    title="separate-edges, mitigated: `a` and `b -> b2` fan in to `join` through add_edge([\"a\", \"b2\"], \"join\"),"
    " or through the separate edges with defer=True on `join`",
    claim=Claim(
        "A list edge waits for all its start nodes, and a deferred join waits for all pending tasks: either way the"
        " join after branches of unequal length runs once and sees every branch's write.",
        DEFER_DOC,
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_separate_edges_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    def run(wiring: str) -> dict:
        join_runs: list[list] = []

        def writer(name: str) -> Callable[..., dict]:
            return lambda state: {"items": [name]}

        def join(state: State) -> dict:
            join_runs.append(list(state["items"]))
            return {}

        builder = StateGraph(State)
        for name in ["a", "b", "b2"]:
            builder.add_node(name, lg_modes.node(obs, writer(name)))
        builder.add_node("join", lg_modes.node(obs, join), **({"defer": True} if wiring == "defer" else {}))
        builder.add_edge(START, "a")
        builder.add_edge(START, "b")
        builder.add_edge("b", "b2")
        if wiring == "list edge":
            builder.add_edge(["a", "b2"], "join")
        else:
            builder.add_edge("a", "join")
            builder.add_edge("b2", "join")
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"items": []}))
        return outcome if "raises" in outcome else joined(["a", "b", "b2"], join_runs)

    with obs.framework():
        variants: dict[str, dict[str, Any]] = {
            "list edge [a, b2] -> join": {"run": run("list edge")},
            "separate edges, defer=True on join": {"run": run("defer")} if has_defer() else {"n/a": NO_DEFER},
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard, safe=JOINED)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/join/unequal-depth-docs-example-mitigated",
    title="unequal-depth-docs-example, mitigated: the docs' a -> b -> b_2, a -> c into d, wired with the list edge"
    " or with defer=True on d",
    claim=Claim(
        "With add_edge([\"b_2\", \"c\"], \"d\") or defer=True on d, d runs once, after both branches.",
        DEFER_DOC,
        expect={"hazard": "safe"},
    ),
    sources=["https://github.com/langchain-ai/langgraph/issues/4026"],
    modes=("sync", "async"),
)
def test_unequal_depth_docs_example_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        aggregate: Annotated[list, operator.add]

    def run(wiring: str) -> dict:
        d_runs: list[list] = []

        def node(name: str) -> Callable[..., dict]:
            def act(state: State) -> dict:
                if name == "d":
                    d_runs.append(list(state["aggregate"]))
                return {"aggregate": [name.upper()]}

            return act

        builder = StateGraph(State)
        for name in ["a", "b", "b_2", "c"]:
            builder.add_node(name, lg_modes.node(obs, node(name)))
        builder.add_node("d", lg_modes.node(obs, node("d")), **({"defer": True} if wiring == "defer" else {}))
        builder.add_edge(START, "a")
        builder.add_edge("a", "b")
        builder.add_edge("a", "c")
        builder.add_edge("b", "b_2")
        if wiring == "list edge":
            builder.add_edge(["b_2", "c"], "d")
        else:
            builder.add_edge("b_2", "d")
            builder.add_edge("c", "d")
        builder.add_edge("d", END)
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"aggregate": []}))
        return outcome if "raises" in outcome else joined(["A", "B", "B_2", "C"], d_runs, join="d")

    with obs.framework():
        variants: dict[str, dict[str, Any]] = {
            "list edge [b_2, c] -> d": {"run": run("list edge")},
            "separate edges, defer=True on d": {"run": run("defer")} if has_defer() else {"n/a": NO_DEFER},
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard, safe=JOINED)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/join/unselected-branch-mitigated",
    title="unselected-branch, mitigated: the join is reached by an edge from each branch (no barrier on a branch the"
    " conditional edge may skip), or with defer=True; `a` alone selected, then `a` and `b`",
    claim=Claim(
        "A join that does not wait on a skippable branch (routed to explicitly from each branch, or deferred) runs"
        " once whichever branches the conditional edge selects.",
        "https://github.com/langchain-ai/langgraph/issues/3249",
        expect={"hazard": "safe"},
    ),
    sources=[DEFER_DOC],
    modes=("sync", "async"),
)
def test_unselected_branch_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    def run(wiring: str, selected: list[str]) -> dict:
        join_runs: list[list] = []
        ran: list[str] = []

        def writer(name: str) -> Callable[..., dict]:
            def node(state: State) -> dict:
                ran.append(name)
                if name == "join":
                    join_runs.append(list(state["items"]))
                return {"items": [name]}

            return node

        builder = StateGraph(State)
        for name in ["a", "b", "after_join"]:
            builder.add_node(name, lg_modes.node(obs, writer(name)))
        builder.add_node("join", lg_modes.node(obs, writer("join")), **({"defer": True} if wiring == "defer" else {}))
        builder.add_conditional_edges(START, lambda state: selected, ["a", "b"])
        builder.add_edge("a", "join")
        builder.add_edge("b", "join")
        builder.add_edge("join", "after_join")
        builder.add_edge("after_join", END)
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"items": []}))
        if "raises" in outcome:
            return outcome
        seen = joined(list(selected), join_runs)
        if "after_join" not in ran:
            seen["wrong"].append("after_join never ran")
        seen["observed"]["ran"] = sorted(ran)  # a and b run side by side: their order in `ran` is the threads'
        return seen

    with obs.framework():
        variants: dict[str, dict[str, Any]] = {
            "an edge from each branch to the join": {
                "a selected": run("edges", ["a"]),
                "a and b selected": run("edges", ["a", "b"]),
            },
            "defer=True on the join": {"a selected": run("defer", ["a"]), "a and b selected": run("defer", ["a", "b"])}
            if has_defer()
            else {"n/a": NO_DEFER},
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard, safe=JOINED)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/join/defer-after-defer-mitigated",
    title="defer-after-defer, mitigated: the chained deferred joins replaced by one deferred join, or the second"
    " fan-in made a list edge add_edge([\"j1\", \"c3\"], \"j2\")",
    claim=Claim(
        "One deferred join (or a deferred join followed by a list-edge fan-in) runs each join once, after every write"
        " it depends on.",
        "https://github.com/langchain-ai/langgraph/issues/6005",
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_defer_after_defer_mitigated(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    def run(wiring: str) -> dict:
        steps: dict[str, list[int]] = {}
        final_join = "j" if wiring == "one deferred join" else "j2"
        join_runs: list[list] = []

        def node(name: str) -> Callable[..., dict]:
            def act(state: State, config: RunnableConfig) -> dict:
                steps.setdefault(name, []).append(config["metadata"]["langgraph_step"])
                if name == final_join:
                    join_runs.append(list(state["items"]))
                return {"items": [name]}

            return act

        builder = StateGraph(State)
        for name in ["a", "b", "b2", "c", "c2", "c3"]:
            builder.add_node(name, lg_modes.node(obs, node(name)))
        for start in ["a", "b", "c"]:
            builder.add_edge(START, start)
        builder.add_edge("b", "b2")
        builder.add_edge("c", "c2")
        builder.add_edge("c2", "c3")
        if wiring == "one deferred join":
            builder.add_node("j", lg_modes.node(obs, node("j")), defer=True)
            for last in ["a", "b2", "c3"]:
                builder.add_edge(last, "j")
            made = ["a", "b", "b2", "c", "c2", "c3"]
        else:
            builder.add_node("j1", lg_modes.node(obs, node("j1")), defer=True)
            builder.add_node("j2", lg_modes.node(obs, node("j2")))
            builder.add_edge("a", "j1")
            builder.add_edge("b2", "j1")
            builder.add_edge(["j1", "c3"], "j2")
            made = ["a", "b", "b2", "c", "c2", "c3", "j1"]
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"items": []}))
        if "raises" in outcome:
            return outcome
        seen = joined(made, join_runs, join=final_join)
        seen["result"]["runs"] = {name: len(s) for name, s in sorted(steps.items()) if name.startswith("j")}
        return seen

    if not has_defer():
        obs.not_applicable(NO_DEFER)
    with obs.framework():
        variants = {
            "one deferred join": {"run": run("one deferred join")},
            "deferred j1, list edge [j1, c3] -> j2": {"run": run("list edge")},
        }
    value, hazard = judge(variants)
    label, detail = words(value, hazard, safe=JOINED)
    obs.record(value, label=label, detail=detail, hazard=hazard)


@probe(
    "langgraph/send/empty-mitigated",
    title="empty, mitigated: the fan-out returns the join's node name when it has no Send; no jobs, then two jobs",
    claim=Claim(
        "A conditional edge that returns the join's name instead of an empty Send list still reaches the join, which"
        " then runs once with or without jobs.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#send",
        expect={"hazard": "safe"},
    ),
    modes=("sync", "async"),
)
def test_empty_mitigated(obs: Observer) -> None:
    Send = obs.need("langgraph.types", "Send")

    class State(TypedDict):
        jobs: list
        items: Annotated[list, operator.add]

    def run(jobs: list[str]) -> dict:
        join_runs: list[list] = []
        ran: list[str] = []

        def plan(state: State) -> dict:
            ran.append("plan")
            return {"items": []}

        def worker(payload: dict) -> dict:
            ran.append("worker")
            return {"items": [payload["job"]]}

        def join(state: State) -> dict:
            ran.append("join")
            join_runs.append(list(state["items"]))
            return {"items": ["joined"]}

        def route(state: State) -> list:
            return [Send("worker", {"job": job}) for job in state["jobs"]] or ["join"]

        builder = StateGraph(State)
        builder.add_node("plan", lg_modes.node(obs, plan))
        builder.add_node("worker", lg_modes.node(obs, worker))
        builder.add_node("join", lg_modes.node(obs, join))
        builder.add_edge(START, "plan")
        builder.add_conditional_edges("plan", route, ["worker", "join"])
        builder.add_edge("worker", "join")
        outcome = obs.attempt(lambda: lg_modes.invoke(obs, builder.compile(), {"jobs": jobs, "items": []}))
        if "raises" in outcome:
            return outcome
        seen = joined(list(jobs), join_runs)
        seen["observed"]["ran"] = ran
        return seen

    with obs.framework():
        variants = {"join name as the fallback": {"no jobs": run([]), "two jobs": run(["j1", "j2"])}}
    value, hazard = judge(variants)
    label, detail = words(value, hazard, safe=JOINED)
    obs.record(value, label=label, detail=detail, hazard=hazard)
