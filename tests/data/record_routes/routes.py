"""A router that may send work to either writer or to both: each test takes one path only."""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    want: str
    both: bool
    log: Annotated[list, operator.add]


def writer_a(state: State) -> dict:
    return {"log": ["a"]}


def writer_b(state: State) -> dict:
    return {"log": ["b"]}


def pick(state: State) -> list:
    if state.get("both"):
        return ["writer_a", "writer_b"]  # both run in one superstep: no test here takes this path
    return [state["want"]]


def build_graph():
    graph = StateGraph(State)
    graph.add_node("writer_a", writer_a)
    graph.add_node("writer_b", writer_b)
    graph.add_conditional_edges(START, pick, ["writer_a", "writer_b"])
    graph.add_edge("writer_a", END)
    graph.add_edge("writer_b", END)
    return graph.compile()
