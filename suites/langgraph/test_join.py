"""Joins: when a fan-in node runs, how often, and what it sees."""

import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

import lg_modes
from fanin.probe import Claim, Observer, probe


BRANCH_WRITES = ("a", "b2")  # the last write of each branch that fans in to `join`


def _join_grade(join_runs: list, branches: tuple[str, ...] = BRANCH_WRITES) -> tuple[str, str]:
    """The hazard of a join and a label, from what the join saw each time it ran, not from a run count.

    A run of the join that did not see a branch's write computed from partial state and nothing
    said so: silent (a write lost to that join run), also when a later run sees everything (the
    early run's output has already gone on) and above all when it is the only run (then the
    branch's write never reaches the join: a barrier that fires on the first arrival looks like a
    healthy single run if only runs are counted). Not order-coupled: which write is missing
    follows the graph's shape (branch depth counted in supersteps), identically on every run, not
    an order the user does not control. A join that never ran, or ran twice on complete state
    (its writes doubled), is silent too; one run that saw every branch is safe.
    """
    missed = [[name for name in branches if name not in run["saw"]] for run in join_runs]
    partial = [f"run {i} without {', '.join(names)}" for i, names in enumerate(missed, 1) if names]
    hazard = "safe" if len(join_runs) == 1 and not partial else "silent"
    return hazard, ", ".join([f"join ×{len(join_runs)}", *partial])


@probe(
    "langgraph/join/separate-edges",
    title="`a` and `b -> b2` fan in to `join` with two separate add_edge calls",
    claim=Claim(
        "With separate edges a node runs whenever any of its predecessors finished in the previous step:"
        " with branches of unequal length the join runs twice, the first time without the longer branch.",
        "https://langchain-ai.github.io/langgraph/how-tos/branching/",
        expect={
            "value.join_runs[0].saw": ["a", "b"],
            "value.join_runs[1].saw": ["a", "b", "b2"],
            "value.join_runs[2]": "(absent)",
        },
    ),
    modes=("sync", "async"),
)
def test_separate_edges(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    join_runs: list[dict] = []

    def writer(name: str) -> Callable[..., dict]:
        return lambda state: {"items": [name]}

    def join(state: State, config: RunnableConfig) -> dict:
        join_runs.append({"step": config["metadata"]["langgraph_step"], "saw": list(state["items"])})
        return {}

    builder = StateGraph(State)
    for name in ["a", "b", "b2"]:
        builder.add_node(name, lg_modes.node(obs, writer(name)))
    builder.add_node("join", lg_modes.node(obs, join))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge("b", "b2")
    builder.add_edge("a", "join")
    builder.add_edge("b2", "join")
    graph = builder.compile()

    with obs.framework(value=lambda: {"join_runs": join_runs}):
        final = lg_modes.invoke(obs, graph, {"items": []})
    hazard, label = _join_grade(join_runs)
    obs.record(
        {"join_runs": join_runs, "final": final},
        label=label,
        detail=f"join ran {len(join_runs)} times, seeing {[r['saw'] for r in join_runs]}",
        hazard=hazard,
    )


@probe(
    "langgraph/join/list-edge",
    title="`a` and `b -> b2` fan in to `join` with add_edge([\"a\", \"b2\"], \"join\")",
    claim=Claim(
        "add_edge with a list of start nodes waits for all of them: the join runs once, after the longer"
        " branch, and sees every write.",
        "https://langchain-ai.github.io/langgraph/how-tos/branching/",
        expect={"value.join_runs[0].saw": ["a", "b", "b2"], "value.join_runs[1]": "(absent)"},
    ),
    modes=("sync", "async"),
)
def test_list_edge(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    join_runs: list[dict] = []

    def writer(name: str) -> Callable[..., dict]:
        return lambda state: {"items": [name]}

    def join(state: State, config: RunnableConfig) -> dict:
        join_runs.append({"step": config["metadata"]["langgraph_step"], "saw": list(state["items"])})
        return {}

    builder = StateGraph(State)
    for name in ["a", "b", "b2"]:
        builder.add_node(name, lg_modes.node(obs, writer(name)))
    builder.add_node("join", lg_modes.node(obs, join))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge("b", "b2")
    builder.add_edge(["a", "b2"], "join")
    graph = builder.compile()

    with obs.framework(value=lambda: {"join_runs": join_runs}):
        final = lg_modes.invoke(obs, graph, {"items": []})
    hazard, label = _join_grade(join_runs)
    obs.record(
        {"join_runs": join_runs, "final": final},
        label=label,
        detail=f"join ran {len(join_runs)} times, seeing {[r['saw'] for r in join_runs]}",
        hazard=hazard,
    )


@probe(
    "langgraph/join/defer",
    title="`a` and `b -> b2` fan in to `join` with separate edges and defer=True on `join`",
    claim=Claim(
        "A node added with defer=True waits until all other pending tasks are done: with separate edges"
        " from unequal branches it runs once, at the end.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api-control-flow#defer-node-execution",
        expect={"value.join_runs[0].saw": ["a", "b", "b2"], "value.join_runs[1]": "(absent)"},
    ),
    modes=("sync", "async"),
)
def test_defer(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    join_runs: list[dict] = []

    def writer(name: str) -> Callable[..., dict]:
        return lambda state: {"items": [name]}

    def join(state: State, config: RunnableConfig) -> dict:
        join_runs.append({"step": config["metadata"]["langgraph_step"], "saw": list(state["items"])})
        return {}

    builder = StateGraph(State)
    obs.need_parameter(builder.add_node, "defer", "StateGraph.add_node")
    for name in ["a", "b", "b2"]:
        builder.add_node(name, lg_modes.node(obs, writer(name)))
    builder.add_node("join", lg_modes.node(obs, join), defer=True)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge("b", "b2")
    builder.add_edge("a", "join")
    builder.add_edge("b2", "join")
    graph = builder.compile()

    with obs.framework(value=lambda: {"join_runs": join_runs}):
        final = lg_modes.invoke(obs, graph, {"items": []})
    hazard, label = _join_grade(join_runs)
    obs.record(
        {"join_runs": join_runs, "final": final},
        label=label,
        detail=f"join ran {len(join_runs)} times, seeing {[r['saw'] for r in join_runs]}",
        hazard=hazard,
    )


@probe(
    "langgraph/join/unselected-branch",
    title="A conditional edge selects only `a`; `join` waits on [\"a\", \"b\"]",
    claim=Claim(
        "A list edge waits for every listed node; when a conditional edge never selects one of them the"
        " join never runs, and nothing is raised (langgraph #3249).",
        "https://github.com/langchain-ai/langgraph/issues/3249",
        expect={"value.ran": ["a"]},
    ),
    modes=("sync", "async"),
)
def test_unselected_branch(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    ran: list[str] = []

    def writer(name: str) -> Callable[..., dict]:
        def node(state: State) -> dict:
            ran.append(name)
            return {"items": [name]}

        return node

    builder = StateGraph(State)
    for name in ["a", "b", "join", "after_join"]:
        builder.add_node(name, lg_modes.node(obs, writer(name)))
    builder.add_conditional_edges(START, lambda state: ["a"], ["a", "b"])
    builder.add_edge(["a", "b"], "join")
    builder.add_edge("join", "after_join")
    builder.add_edge("after_join", END)
    graph = builder.compile()

    with obs.framework(value=lambda: {"ran": ran}):
        final = lg_modes.invoke(obs, graph, {"items": []})
    joined = "join" in ran
    obs.record(
        {"ran": ran, "final": final},
        label="join runs" if joined else "join never runs, no error",
        detail=f"nodes run: {ran}; final {final['items']}",
        hazard="safe" if joined else "silent",
    )


@probe(
    "langgraph/join/unequal-depth-docs-example",
    title="The docs' unequal-length branches example (a -> b -> b_2, a -> c, into d): three wirings",
    claim=Claim(
        "The docs: with add_edge([\"b_2\", \"c\"], \"d\") d runs once after both branches; with two separate"
        " edges d would run twice; with defer=True on d it waits for the whole b branch and runs once.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api-control-flow#defer-node-execution",
        expect={
            "value.list edge [b_2, c] -> d.d_runs": 1,
            "value.separate edges.d_runs": 2,
            "value.separate edges, defer=True on d.d_runs": 1,
        },
    ),
    sources=["https://github.com/langchain-ai/langgraph/issues/4026"],
    modes=("sync", "async"),
)
def test_unequal_depth_docs_example(obs: Observer) -> None:
    class State(TypedDict):
        aggregate: Annotated[list, operator.add]

    def run(wiring: str) -> dict:
        steps: dict[str, list[int]] = {}

        def node(name: str) -> Callable[..., dict]:
            def act(state: State, config: RunnableConfig) -> dict:
                steps.setdefault(name, []).append(config["metadata"]["langgraph_step"])
                return {"aggregate": [name.upper()]}

            return act

        builder = StateGraph(State)
        for name in ["a", "b", "b_2", "c"]:
            builder.add_node(name, lg_modes.node(obs, node(name)))
        if wiring == "separate edges, defer=True on d":
            try:
                builder.add_node("d", lg_modes.node(obs, node("d")), defer=True)
            except TypeError:
                return {"n/a": "StateGraph.add_node has no parameter 'defer' in this version"}
        else:
            builder.add_node("d", lg_modes.node(obs, node("d")))
        builder.add_edge(START, "a")
        builder.add_edge("a", "b")
        builder.add_edge("a", "c")
        builder.add_edge("b", "b_2")
        if wiring == "list edge [b_2, c] -> d":
            builder.add_edge(["b_2", "c"], "d")
        else:
            builder.add_edge("b_2", "d")
            builder.add_edge("c", "d")
        builder.add_edge("d", END)
        final = lg_modes.invoke(obs, builder.compile(), {"aggregate": []})
        return {"node_steps": steps, "d_runs": len(steps.get("d", [])), "aggregate": final["aggregate"]}

    with obs.framework():
        runs = {
            wiring: run(wiring)
            for wiring in ["list edge [b_2, c] -> d", "separate edges", "separate edges, defer=True on d"]
        }
    counts = ", ".join(f"×{r['d_runs']}" if "d_runs" in r else "n/a" for r in runs.values())
    twice = any(r.get("d_runs", 1) != 1 for r in runs.values())
    obs.record(
        runs,
        label=f"d {counts}",
        detail=f"d runs per wiring (list edge, separate edges, defer): {counts}",
        hazard="silent" if twice else "safe",
    )


@probe(
    "langgraph/join/defer-after-defer",
    title="A deferred join downstream of another deferred join, with a longer third branch",
    claim=Claim(
        "defer=True makes a node wait until nothing else is pending; a deferred node fed by another"
        " deferred node is expected to run once, after it (langgraph #6005 reports otherwise).",
        "https://github.com/langchain-ai/langgraph/issues/6005",
        expect={"value.runs.j2": 1},
    ),
    modes=("sync", "async"),
)
def test_defer_after_defer(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    steps: dict[str, list[int]] = {}
    seen_by_j2: list[list] = []

    def node(name: str) -> Callable[..., dict]:
        def act(state: State, config: RunnableConfig) -> dict:
            steps.setdefault(name, []).append(config["metadata"]["langgraph_step"])
            if name == "j2":
                seen_by_j2.append(list(state["items"]))
            return {"items": [name]}

        return act

    builder = StateGraph(State)
    obs.need_parameter(builder.add_node, "defer", "StateGraph.add_node")
    for name in ["a", "b", "b2", "c", "c2", "c3"]:
        builder.add_node(name, lg_modes.node(obs, node(name)))
    builder.add_node("j1", lg_modes.node(obs, node("j1")), defer=True)
    builder.add_node("j2", lg_modes.node(obs, node("j2")), defer=True)
    for start in ["a", "b", "c"]:
        builder.add_edge(START, start)
    builder.add_edge("b", "b2")
    builder.add_edge("a", "j1")
    builder.add_edge("b2", "j1")
    builder.add_edge("j1", "j2")
    builder.add_edge("c", "c2")
    builder.add_edge("c2", "c3")
    builder.add_edge("c3", "j2")
    graph = builder.compile()

    with obs.framework(value=lambda: {"node_steps": steps}):
        final = lg_modes.invoke(obs, graph, {"items": []})
    runs = {name: len(steps.get(name, [])) for name in ["j1", "j2"]}
    once = runs == {"j1": 1, "j2": 1}
    j2_missed_j1 = any("j1" not in seen for seen in seen_by_j2)
    obs.record(
        {"node_steps": steps, "runs": runs, "seen_by_j2": seen_by_j2, "final": final},
        label=f"j1 ×{runs['j1']}, j2 ×{runs['j2']}",
        detail=f"run counts {runs}; j2 saw {seen_by_j2}"
        + ("; j2 ran without j1's write" if j2_missed_j1 else ""),
        hazard="safe" if once and not j2_missed_j1 else "silent",
    )


@probe(
    "langgraph/join/defer-with-command",
    title="defer=True on a join reached through Command(goto=...), followed by a conditional edge",
    claim=Claim(
        "A deferred node waits for all pending tasks whatever routed to it, so a join reached through"
        " Command(goto) runs once and its conditional edge routes once (langgraph #5182).",
        "https://github.com/langchain-ai/langgraph/issues/5182",
        expect={
            "value.a: Command(goto=[b, c]); b_2, c: edges to d.runs.d": 1,
            "value.a: Command(goto=[b, c]); b_2, c: edges to d.runs.e": 1,
            "value.b_2: Command(goto=d); c: conditional edge to d.runs.d": 1,
            "value.b_2: Command(goto=d); c: conditional edge to d.runs.e": 1,
        },
    ),
    modes=("sync", "async"),
)
def test_defer_with_command(obs: Observer) -> None:
    Command = obs.need("langgraph.types", "Command")

    class State(TypedDict):
        aggregate: Annotated[list, operator.add]

    def run(wiring: str) -> dict:
        steps: dict[str, list[int]] = {}

        def record(name: str, config: RunnableConfig) -> None:
            steps.setdefault(name, []).append(config["metadata"]["langgraph_step"])

        def plain(name: str) -> Callable[..., dict]:
            def act(state: State, config: RunnableConfig) -> dict:
                record(name, config)
                return {"aggregate": [name]}

            return act

        def goto(name: str, targets: str | list[str]) -> Callable[..., Any]:
            def act(state: State, config: RunnableConfig) -> Any:
                record(name, config)
                return Command(update={"aggregate": [name]}, goto=targets)

            return act

        builder = StateGraph(State)
        obs.need_parameter(builder.add_node, "defer", "StateGraph.add_node")
        if wiring == "a: Command(goto=[b, c]); b_2, c: edges to d":
            builder.add_node("a", lg_modes.node(obs, goto("a", ["b", "c"])), destinations=("b", "c"))
            builder.add_node("b_2", lg_modes.node(obs, plain("b_2")))
            builder.add_node("c", lg_modes.node(obs, plain("c")))
            builder.add_edge("b_2", "d")
            builder.add_edge("c", "d")
        else:
            builder.add_node("a", lg_modes.node(obs, plain("a")))
            builder.add_node("b_2", lg_modes.node(obs, goto("b_2", "d")), destinations=("d",))
            builder.add_node("c", lg_modes.node(obs, plain("c")))
            builder.add_edge("a", "b")
            builder.add_edge("a", "c")
            builder.add_conditional_edges("c", lambda state: "d", ["d"])
        builder.add_node("b", lg_modes.node(obs, plain("b")))
        builder.add_node("d", lg_modes.node(obs, plain("d")), defer=True)
        builder.add_node("e", lg_modes.node(obs, plain("e")))
        builder.add_edge(START, "a")
        builder.add_edge("b", "b_2")
        builder.add_conditional_edges("d", lambda state: "e" if "b_2" in state["aggregate"] else END, ["e", END])
        builder.add_edge("e", END)
        final = lg_modes.invoke(obs, builder.compile(), {"aggregate": []})
        return {"node_steps": steps, "runs": {n: len(steps.get(n, [])) for n in ["d", "e"]}, "final": final}

    with obs.framework():
        runs = {
            wiring: run(wiring)
            for wiring in [
                "a: Command(goto=[b, c]); b_2, c: edges to d",
                "b_2: Command(goto=d); c: conditional edge to d",
            ]
        }
    counts = [r["runs"] for r in runs.values()]
    once = all(c == {"d": 1, "e": 1} for c in counts)
    obs.record(
        runs,
        label="d ×1, e ×1 in both wirings" if once else "; ".join(f"d ×{c['d']}, e ×{c['e']}" for c in counts),
        detail=f"run counts per wiring: {counts}",
        hazard="safe" if once else "silent",
    )
