"""A subgraph on the parent's schema whose `log` is operator.add: it returns the whole list back — hazardous.

The parent's reducer appends the subgraph's full `log` (the parent's entries included) to the
parent's `log`: entries are duplicated, silently (langgraph/subgraph/operator-add-duplication).
Two such subgraphs run in parallel.
"""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    log: Annotated[list, operator.add]


def step(name: str):
    def node(state: State) -> dict:
        return {"log": [name]}

    return node


def subgraph(name: str) -> object:
    sub = StateGraph(State)
    sub.add_node(name, step(name))
    sub.add_edge(START, name)
    sub.add_edge(name, END)
    return sub.compile()


builder = StateGraph(State)
builder.add_node("intake", step("intake"))
builder.add_node("audit_team", subgraph("audit"))
builder.add_node("review_team", subgraph("review"))
builder.add_edge(START, "intake")
builder.add_edge("intake", "audit_team")
builder.add_edge("intake", "review_team")
builder.add_edge("audit_team", END)
builder.add_edge("review_team", END)
graph = builder.compile()

INPUT = {"log": []}
