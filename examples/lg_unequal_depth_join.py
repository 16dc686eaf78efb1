"""`a` and `b -> b2` fan in to `join` with two separate add_edge calls: the join runs twice — hazardous."""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    items: Annotated[list, operator.add]


def writer(name):
    return lambda state: {"items": [name]}


builder = StateGraph(State)
for name in ("a", "b", "b2"):
    builder.add_node(name, writer(name))
builder.add_node("join", lambda state: {})
builder.add_edge(START, "a")
builder.add_edge(START, "b")
builder.add_edge("b", "b2")
builder.add_edge("a", "join")
builder.add_edge("b2", "join")
builder.add_edge("join", END)
graph = builder.compile()

INPUT = {"items": []}
