"""Two subgraphs run as parallel nodes and share the parent's `notes` key — hazardous."""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    notes: Annotated[list, operator.add]


def subgraph(name):
    inner = StateGraph(State)
    inner.add_node("work", lambda state: {"notes": [name]})
    inner.add_edge(START, "work")
    inner.add_edge("work", END)
    return inner.compile()


builder = StateGraph(State)
builder.add_node("research", subgraph("research"))
builder.add_node("review", subgraph("review"))
builder.add_edge(START, "research")
builder.add_edge(START, "review")
builder.add_edge("research", END)
builder.add_edge("review", END)
graph = builder.compile()

INPUT = {"notes": []}
