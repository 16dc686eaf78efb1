"""Map-reduce with Send: every worker writes the plain key `summary` (a LastValue) — hazardous."""

from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send


class State(TypedDict):
    docs: list
    summary: str


def plan(state: State) -> dict:
    return {}


def fan_out(state: State) -> list:
    return [Send("summarise", {"docs": [doc], "summary": ""}) for doc in state["docs"]]


def summarise(state: State) -> dict:
    return {"summary": f"summary of {state['docs'][0]}"}


builder = StateGraph(State)
builder.add_node("plan", plan)
builder.add_node("summarise", summarise)
builder.add_edge(START, "plan")
builder.add_conditional_edges("plan", fan_out, ["summarise"])
builder.add_edge("summarise", END)
graph = builder.compile()

INPUT = {"docs": ["a", "b"], "summary": ""}
