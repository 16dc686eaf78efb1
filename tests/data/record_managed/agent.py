"""A small app in the shape of a prebuilt agent's graph (langgraph-supervisor's workers are create_react_agent
graphs): its state holds a managed value, `remaining_steps`, which the graph lists among its channels and a run's
loop does not. Two checkers run in one superstep and append to one list."""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.managed import RemainingSteps


class State(TypedDict, total=False):
    question: str
    checks: Annotated[list, operator.add]  # both checkers append here in one superstep
    remaining_steps: RemainingSteps
    answer: str


def check_facts(state: State) -> dict:
    return {"checks": [f"facts ok ({state['remaining_steps']} steps left)"]}


def check_style(state: State) -> dict:
    return {"checks": ["style ok"]}


def answer(state: State) -> dict:
    return {"answer": "; ".join(state["checks"])}


def build_agent():
    graph = StateGraph(State)
    graph.add_node("check_facts", check_facts)
    graph.add_node("check_style", check_style)
    graph.add_node("answer", answer)
    graph.add_edge(START, "check_facts")
    graph.add_edge(START, "check_style")
    graph.add_edge(["check_facts", "check_style"], "answer")
    graph.add_edge("answer", END)
    return graph.compile()
