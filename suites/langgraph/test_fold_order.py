"""The order in which one superstep's parallel writes are folded into a reducer key."""

import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph

import lg_modes
from fanin.probe import Claim, Observer, probe


@probe(
    "langgraph/fold-order/node-names",
    title="Three retrievers fanned out from one node append to one operator.add list: which order?",
    claim=Claim(
        "Writes of one superstep are applied in a deterministic order that does not depend on execution"
        " timing; for edge-triggered nodes that order is the nodes' names (sorted), not the order they were"
        " added or meant to run in. The docs advise a sort key in the state when the order matters.",
        "https://langchain-ai.github.io/langgraph/how-tos/branching/#stable-sorting",
        expect={
            "value.2_retriever / a_retriever.rule": "by name (code point)",
            "value.KBSearch / search_docs.rule": "by name (code point)",
            "value.add order reversed.rule": "by name (code point)",
            "value.verify_a / analyze_b.rule": "by name (code point)",
        },
    ),
    sources=["https://reference.langchain.com/python/langgraph.checkpoint/base/writes_sort_key"],
    modes=("sync", "async"),
)
def test_node_names(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    # Each set is chosen so that its candidate orders all differ (sorted by code point, sorted ignoring
    # case, the order the nodes were added): what the fold matches names one rule, never several.
    name_sets = {
        "add order reversed": ["retriever_c", "Retriever_b", "retriever_a"],
        "verify_a / analyze_b": ["verify_a", "analyze_b", "Rank_c"],
        "KBSearch / search_docs": ["search_docs", "KBSearch", "Web"],
        "2_retriever / a_retriever": ["a_retriever", "B_retriever", "2_retriever"],
    }
    steps: dict[str, int] = {}

    def retriever(name: str) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"items": [name]}

        return node

    observed: dict[str, dict] = {}
    for case, names in name_sets.items():
        candidates = {
            "by name (code point)": sorted(names),
            "by name (case-insensitive)": sorted(names, key=str.lower),
            "by add order": list(names),
        }
        if len({tuple(order) for order in candidates.values()}) != len(candidates):
            raise AssertionError(f"{case}: two candidate orders coincide, so the set cannot tell them apart")
        builder = StateGraph(State)
        builder.add_node("plan", lg_modes.node(obs, lambda state: {"items": []}))
        builder.add_edge(START, "plan")
        for name in names:
            builder.add_node(name, lg_modes.node(obs, retriever(name)))
            builder.add_edge("plan", name)
        with obs.framework(value=lambda: {"observed": observed, "writer_steps": steps}):
            items = lg_modes.invoke(obs, builder.compile(), {"items": []})["items"]
        if len({steps[name] for name in names}) != 1:
            obs.vacuous(f"{case}: the retrievers did not share one superstep: {steps}")
        rule = next((rule for rule, order in candidates.items() if items == order), "other")
        lost = sorted(set(names) - set(items))
        observed[case] = {"added": names, "items": items, "rule": rule, **({"lost": lost} if lost else {})}
    rules = {case["rule"] for case in observed.values()}
    rule = rules.pop() if len(rules) == 1 else "mixed"
    lost = [f"{case}: {name}" for case, seen in observed.items() for name in seen.get("lost", [])]
    # Every write kept in a fold whose order follows the names (or the code): the result is coupled to that order.
    hazard = "silent" if lost else "order-coupled"
    obs.record(
        observed,
        label=f"lost {len(lost)} writes" if lost else f"order: {rule}",
        detail=f"writes lost: {lost}"
        if lost
        else f"fold order {rule} in every name set"
        if rule != "mixed"
        else f"fold order differs by name set: {[c['rule'] for c in observed.values()]}",
        hazard=hazard,
    )


@probe(
    "langgraph/fold-order/rename",
    title="The same fan-out with one node renamed (search_docs -> search_papers): does the list order change?",
    claim=Claim(
        "If the fold order is by node name, renaming a node reorders the reducer's result with no change"
        " to the graph's shape.",
        "https://langchain-ai.github.io/langgraph/how-tos/branching/#stable-sorting",
        expect={"value.order_changed": True},
    ),
    modes=("sync", "async"),
)
def test_rename(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    steps: dict[str, int] = {}

    def retriever(name: str, item: str) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"items": [item]}

        return node

    def run(docs_node: str) -> list:
        builder = StateGraph(State)
        builder.add_node("plan", lg_modes.node(obs, lambda state: {"items": []}))
        builder.add_edge(START, "plan")
        for name, item in [(docs_node, "docs"), ("search_news", "news"), ("KBSearch", "kb")]:
            builder.add_node(name, lg_modes.node(obs, retriever(name, item)))
            builder.add_edge("plan", name)
        steps.clear()
        items = lg_modes.invoke(obs, builder.compile(), {"items": []})["items"]
        obs.require_same_step(steps, expected=3, what="retrievers")
        return items

    with obs.framework():
        before = run("search_docs")
        after = run("search_papers")
    changed = before != after
    obs.record(
        {"search_docs": before, "search_papers": after, "order_changed": changed},
        label="rename reorders" if changed else "rename keeps order",
        detail=f"items {before} became {after} after the rename" if changed else f"items {before} either way",
        hazard="order-coupled" if changed else "safe",
    )


@probe(
    "langgraph/fold-order/completion-time",
    title="Three parallel writers finish in a forced order (gates): does finishing order change the fold?",
    claim=Claim(
        "Writes are applied at the end of the superstep in a deterministic order, so the result does not"
        " depend on which parallel node finished first.",
        "https://docs.langchain.com/oss/python/pregel",
        expect={"value.finish a, b, c.items": ["a", "b", "c"], "value.finish c, b, a.items": ["a", "b", "c"]},
    ),
    modes=("sync", "async"),
)
def test_completion_time(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    def run(order: list[str]) -> dict:
        turns = lg_modes.Gate(obs, order)

        def writer(name: str) -> Callable[..., dict]:
            def node(state: State) -> dict:
                return {"items": [name]}

            return node

        def release(chunk: tuple[str, Any]) -> None:
            mode, data = chunk
            if mode == "updates":
                for node in data:
                    turns.finished(node)

        builder = StateGraph(State)
        for name in ["a", "b", "c"]:
            builder.add_node(name, turns.node(name, writer(name)))
            builder.add_edge(START, name)
        chunks = lg_modes.stream(
            obs, builder.compile(), {"items": []}, stream_mode=["updates", "values"], on_chunk=release
        )
        final = [data for mode, data in chunks if mode == "values"][-1]
        obs.require_in_flight(turns)
        return {"finished": turns.acted, "items": final["items"]}

    with obs.framework():
        runs = {"finish c, b, a": run(["c", "b", "a"]), "finish a, b, c": run(["a", "b", "c"])}
    for case, result in runs.items():
        if result["finished"] != case.removeprefix("finish ").split(", "):
            obs.vacuous(f"{case}: the nodes finished as {result['finished']}")
    folds = {tuple(r["items"]) for r in runs.values()}
    ignored = len(folds) == 1
    obs.record(
        runs,
        label=f"finish order ignored: {', '.join(runs['finish c, b, a']['items'])}"
        if ignored
        else "fold follows finish order",
        detail="the same fold whichever node finishes first"
        if ignored
        else f"the fold changes with finishing order: {runs}",
        hazard="order-coupled" if ignored else "nondeterministic",
    )


@probe(
    "langgraph/fold-order/across-supersteps",
    title="Writers at different depths append to one operator.add list",
    claim=Claim(
        "Each superstep's writes are applied before the next superstep runs, so a shallower writer's items"
        " come before a deeper writer's, whatever the names.",
        "https://docs.langchain.com/oss/python/langgraph/graph-api#graphs",
        expect={"value.final.items": ["z_shallow", "a_deep"]},
    ),
    modes=("sync", "async"),
)
def test_across_supersteps(obs: Observer) -> None:
    class State(TypedDict):
        items: Annotated[list, operator.add]

    steps: dict[str, int] = {}

    def writer(name: str, items: list) -> Callable[..., dict]:
        def node(state: State, config: RunnableConfig) -> dict:
            steps[name] = config["metadata"]["langgraph_step"]
            return {"items": items}

        return node

    builder = StateGraph(State)
    builder.add_node("z_shallow", lg_modes.node(obs, writer("z_shallow", ["z_shallow"])))
    builder.add_node("a_hop", lg_modes.node(obs, writer("a_hop", [])))
    builder.add_node("a_deep", lg_modes.node(obs, writer("a_deep", ["a_deep"])))
    builder.add_edge(START, "z_shallow")
    builder.add_edge(START, "a_hop")
    builder.add_edge("a_hop", "a_deep")
    graph = builder.compile()

    with obs.framework(value=lambda: {"writer_steps": steps}):
        final = lg_modes.invoke(obs, graph, {"items": []})
    if steps.get("z_shallow") == steps.get("a_deep"):
        obs.vacuous(f"the writers ran in the same superstep: {steps}")
    items = final["items"]
    # The shallow writer's name sorts last, so "by superstep" and "by name" are different orders here.
    rule = "by superstep" if items == ["z_shallow", "a_deep"] else "by name" if items == ["a_deep", "z_shallow"] else "other"
    lost = sorted({"z_shallow", "a_deep"} - set(items))
    obs.record(
        {"final": final, "writer_steps": steps, **({"lost": lost} if lost else {})},
        label=f"lost {', '.join(lost)}" if lost else f"order: {rule}",
        detail=f"items {items} with writer steps {dict(sorted(steps.items()))}",
        hazard="silent" if lost else "order-coupled",
    )
