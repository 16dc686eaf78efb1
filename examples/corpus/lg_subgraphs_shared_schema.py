"""Two parallel subgraphs compiled on the parent's own schema (no output schema) — hazardous.

Each subgraph returns its whole state, including the unchanged `question`, so both write the
parent's LastValue `question` in one superstep: InvalidUpdateError (langgraph/subgraph/shared-keys).
"""

from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    question: str
    facts: str
    opinion: str


def find_facts(state: State) -> dict:
    return {"facts": f"facts about {state['question']}"}


def form_opinion(state: State) -> dict:
    return {"opinion": f"opinion on {state['question']}"}


def subgraph(name: str, node) -> object:
    sub = StateGraph(State)
    sub.add_node(name, node)
    sub.add_edge(START, name)
    sub.add_edge(name, END)
    return sub.compile()


builder = StateGraph(State)
builder.add_node("facts_team", subgraph("find_facts", find_facts))
builder.add_node("opinion_team", subgraph("form_opinion", form_opinion))
builder.add_edge(START, "facts_team")
builder.add_edge(START, "opinion_team")
builder.add_edge("facts_team", END)
builder.add_edge("opinion_team", END)
graph = builder.compile()

INPUT = {"question": "is tea good", "facts": "", "opinion": ""}
