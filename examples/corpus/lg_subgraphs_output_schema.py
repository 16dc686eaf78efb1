"""Two parallel subgraphs, each with an output schema naming only its own key (the mitigation) — safe.

The subgraphs read the parent's `question` but return only `facts` / `opinion`: no key is
written by both, nothing raises, nothing is duplicated.
"""

from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    question: str
    facts: str
    opinion: str


class FactsOut(TypedDict):
    facts: str


class OpinionOut(TypedDict):
    opinion: str


def find_facts(state: State) -> dict:
    return {"facts": f"facts about {state['question']}"}


def form_opinion(state: State) -> dict:
    return {"opinion": f"opinion on {state['question']}"}


facts_sub = StateGraph(State, output_schema=FactsOut)
facts_sub.add_node("find_facts", find_facts)
facts_sub.add_edge(START, "find_facts")
facts_sub.add_edge("find_facts", END)

opinion_sub = StateGraph(State, output_schema=OpinionOut)
opinion_sub.add_node("form_opinion", form_opinion)
opinion_sub.add_edge(START, "form_opinion")
opinion_sub.add_edge("form_opinion", END)

builder = StateGraph(State)
builder.add_node("facts_team", facts_sub.compile())
builder.add_node("opinion_team", opinion_sub.compile())
builder.add_edge(START, "facts_team")
builder.add_edge(START, "opinion_team")
builder.add_edge("facts_team", END)
builder.add_edge("opinion_team", END)
graph = builder.compile()

INPUT = {"question": "is tea good", "facts": "", "opinion": ""}
