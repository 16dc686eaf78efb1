"""Subgraphs as parallel branches: what their outputs write into the parent."""

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import START, StateGraph

from fanin.probe import Claim, Observer, probe

SUBGRAPH_DOC = "https://docs.langchain.com/oss/python/langgraph/use-subgraphs"


@probe(
    "langgraph/subgraph/shared-keys",
    title="Two parallel subgraphs on the parent's schema, each updating its own key, return unchanged shared keys",
    claim=Claim(
        "A subgraph added as a node returns its whole output state, shared keys included; two parallel"
        " subgraphs therefore both write the unchanged shared plain keys and collide (langgraph #6446).",
        "https://github.com/langchain-ai/langgraph/issues/6446",
        expect={"outcome": "raises:InvalidUpdateError"},
    ),
    sources=[SUBGRAPH_DOC],
)
def test_shared_keys(obs: Observer) -> None:
    class State(TypedDict):
        question: str
        s1: int
        s2: int

    def subgraph(key: str) -> Any:
        sub = StateGraph(State)
        sub.add_node("work", lambda state: {key: 1})
        sub.add_edge(START, "work")
        return sub.compile()

    builder = StateGraph(State)
    builder.add_node("sub1", subgraph("s1"))
    builder.add_node("sub2", subgraph("s2"))
    builder.add_edge(START, "sub1")
    builder.add_edge(START, "sub2")
    graph = builder.compile()

    updates: list = []

    def by_node(chunks: list) -> list:
        return sorted(chunks, key=lambda chunk: sorted(chunk))

    with obs.framework(value=lambda: {"updates": by_node(updates)}):
        final: Any = None
        for mode, chunk in graph.stream({"question": "q", "s1": 0, "s2": 0}, stream_mode=["updates", "values"]):
            if mode == "updates":
                updates.append(chunk)
            else:
                final = chunk
    updates = by_node(updates)
    merged = final["s1"] == 1 and final["s2"] == 1
    obs.record(
        {"final": final, "updates": updates},
        label="no collision" if merged else "one subgraph's update lost",
        detail=f"no error; subgraph updates {updates}; final {final}",
        hazard="safe" if merged else "silent",
    )


@probe(
    "langgraph/subgraph/operator-add-duplication",
    title="A subgraph on the parent's schema returns its whole operator.add list into the parent's key",
    claim=Claim(
        "A subgraph's output is its whole state, folded into the parent by the parent's reducer: with"
        " operator.add the items the subgraph received are appended again (langgraph #4007, #3648).",
        "https://github.com/langchain-ai/langgraph/issues/4007",
        expect={"value.copies.input": 2},
    ),
    sources=["https://github.com/langchain-ai/langgraph/issues/3648"],
)
def test_operator_add_duplication(obs: Observer) -> None:
    class State(TypedDict):
        list_a: Annotated[list, operator.add]

    sub = StateGraph(State)
    sub.add_node("sub_node_1", lambda state: {"list_a": ["sub_node_1"]})
    sub.add_edge(START, "sub_node_1")

    builder = StateGraph(State)
    builder.add_node("node_1", lambda state: {"list_a": ["node_1"]})
    builder.add_node("subgraph", sub.compile())
    builder.add_node("node_2", lambda state: {"list_a": ["node_2"]})
    builder.add_edge(START, "node_1")
    builder.add_edge("node_1", "subgraph")
    builder.add_edge("subgraph", "node_2")
    graph = builder.compile()

    with obs.framework():
        final = graph.invoke({"list_a": ["input"]})
    items = final["list_a"]
    copies = {item: items.count(item) for item in sorted(set(items))}
    duplicated = any(count > 1 for count in copies.values())
    obs.record(
        {"final": final, "copies": copies},
        label=f"duplicated: input ×{copies.get('input', 0)}, node_1 ×{copies.get('node_1', 0)}"
        if duplicated
        else "no duplication",
        detail=f"parent list after the subgraph: {items}",
        hazard="silent" if duplicated else "safe",
    )
