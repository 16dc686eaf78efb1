"""Map-reduce with Send where the workers append to a reducer key (`summaries`, operator.add) — safe.

The Send workers' writes are folded in task order; nothing is lost and nothing raises. The
reduce step reads the list once all workers finished. (Order-coupled at most, never silent/loud.)
"""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send


class State(TypedDict):
    topic: str
    subjects: list
    summaries: Annotated[list, operator.add]
    best: str


def generate_subjects(state: State) -> dict:
    return {"subjects": [f"{state['topic']} {n}" for n in ("history", "economics", "myths")]}


def continue_to_summaries(state: State) -> list:
    return [Send("summarise", {"subject": s}) for s in state["subjects"]]


def summarise(state: dict) -> dict:
    return {"summaries": [f"summary of {state['subject']}"]}


def pick_best(state: State) -> dict:
    return {"best": sorted(state["summaries"])[0]}


builder = StateGraph(State)
builder.add_node("generate_subjects", generate_subjects)
builder.add_node("summarise", summarise)
builder.add_node("pick_best", pick_best)
builder.add_edge(START, "generate_subjects")
builder.add_conditional_edges("generate_subjects", continue_to_summaries, ["summarise"])
builder.add_edge("summarise", "pick_best")
builder.add_edge("pick_best", END)
graph = builder.compile()

INPUT = {"topic": "tea", "subjects": [], "summaries": [], "best": ""}
