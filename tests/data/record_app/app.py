"""A small app in the shape of a user's project: a graph built by a factory, tested by its own tests."""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    topic: str
    notes: Annotated[list, operator.add]  # two researchers append here in one superstep
    summary: str  # a plain key: the writer and the summariser never run together
    reviewed: bool


def research_web(state: State) -> dict:
    return {"notes": [f"web: {state['topic']}"]}


def research_papers(state: State) -> dict:
    return {"notes": [f"papers: {state['topic']}"], "summary": "draft"}


def summarise(state: State) -> dict:
    return {"summary": " | ".join(state["notes"])}


def review(state: State) -> dict:
    return {"reviewed": True}


def route(state: State) -> str:
    return "review" if state.get("topic") == "needs review" else END


def build_graph():
    graph = StateGraph(State)
    graph.add_node("research_web", research_web)
    graph.add_node("research_papers", research_papers)
    graph.add_node("summarise", summarise)
    graph.add_node("review", review)
    graph.add_edge(START, "research_web")
    graph.add_edge(START, "research_papers")
    graph.add_edge(["research_web", "research_papers"], "summarise")
    graph.add_conditional_edges("summarise", route, ["review", END])
    graph.add_edge("review", END)
    return graph.compile()
