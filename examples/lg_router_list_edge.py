"""A router picks some of the branches a list-edge join waits for: the join may never run — hazardous."""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    items: Annotated[list, operator.add]
    route: str


def route(state: State) -> list:
    return ["search"] if state["route"] == "search" else ["search", "lookup"]


builder = StateGraph(State)
builder.add_node("router", lambda state: {})
builder.add_node("search", lambda state: {"items": ["search"]})
builder.add_node("lookup", lambda state: {"items": ["lookup"]})
builder.add_node("answer", lambda state: {"items": ["answer"]})
builder.add_edge(START, "router")
builder.add_conditional_edges("router", route, {"search": "search", "lookup": "lookup"})
builder.add_edge(["search", "lookup"], "answer")
builder.add_edge("answer", END)
graph = builder.compile()

INPUT = {"items": [], "route": "both"}
