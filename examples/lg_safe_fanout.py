"""A safe fan-out: one key per branch, a list-edge join, nothing written twice — not flagged."""

from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    search: str
    lookup: str
    answer: str


builder = StateGraph(State)
builder.add_node("search", lambda state: {"search": "found"})
builder.add_node("lookup", lambda state: {"lookup": "looked up"})
builder.add_node("answer", lambda state: {"answer": state["search"] + " + " + state["lookup"]})
builder.add_edge(START, "search")
builder.add_edge(START, "lookup")
builder.add_edge(["search", "lookup"], "answer")
builder.add_edge("answer", END)
graph = builder.compile()

INPUT = {"search": "", "lookup": "", "answer": ""}
