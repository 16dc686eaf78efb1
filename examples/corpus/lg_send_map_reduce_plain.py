"""Map-reduce with Send where every worker writes the plain key `summary` (no reducer) — hazardous.

Several Send tasks of `summarise` write the LastValue `summary` in one superstep:
InvalidUpdateError (langgraph/send/reducer-required).
"""

from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send


class State(TypedDict):
    urls: list
    summary: str


def fetch_list(state: State) -> dict:
    return {"urls": list(state["urls"])}


def route(state: State) -> list:
    return [Send("summarise", {"url": url}) for url in state["urls"]]


def summarise(state: dict) -> dict:
    return {"summary": f"page {state['url']}"}


builder = StateGraph(State)
builder.add_node("fetch_list", fetch_list)
builder.add_node("summarise", summarise)
builder.add_edge(START, "fetch_list")
builder.add_conditional_edges("fetch_list", route, ["summarise"])
builder.add_edge("summarise", END)
graph = builder.compile()

INPUT = {"urls": ["a", "b", "c"], "summary": ""}
